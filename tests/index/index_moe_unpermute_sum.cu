// Index-buffer kernel for LARK's corpus: the MoE "unpermute and reduce" step (as in vLLM's
// moe_unpermute / TensorRT-LLM's finalizeMoeRoutingKernel), written for this corpus: each token
// gathers its topk expert outputs through expanded_row and sums them weighted by the router scores.
// Writes are per token, so there is no race; bounds depend on expanded_row < num_rows.
#include "../real/real_prelude.h"

extern "C" __global__ void index_moe_unpermute_sum(const float* __restrict__ expert_out, const float* __restrict__ scores,
                                                   const int* __restrict__ expanded_row, float* __restrict__ out, const int topk,
                                                   const int hidden_size) {
  const int token = blockIdx.x;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    float acc = 0.0f;
    for (int k = 0; k < topk; ++k) {
      const int row = expanded_row[token * topk + k];
      acc += scores[token * topk + k] * expert_out[row * hidden_size + i];
    }
    out[token * hidden_size + i] = acc;
  }
}
