// Index-buffer kernel for LARK's corpus: the MoE "expand and permute rows" step (as in
// TensorRT-LLM's expandInputRowsKernel / vLLM's moe_permute), written for this corpus: each
// (token, k) pair copies its hidden row to the row that the routing sort assigned to it,
// permuted_row[token * topk + k]. Race-free exactly when permuted_row is a permutation.
#include "../real/real_prelude.h"

extern "C" __global__ void index_moe_permute(const float* __restrict__ hidden, float* __restrict__ permuted,
                                             const int* __restrict__ permuted_row, const int topk, const int hidden_size) {
  const int pair = blockIdx.x;  // token * topk + k
  const int token = pair / topk;
  const int dst_row = permuted_row[pair];
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) permuted[dst_row * hidden_size + i] = hidden[token * hidden_size + i];
}
