// Index-buffer kernel for LARK's corpus: a masked scatter (the pattern of
// torch.Tensor.masked_scatter_ / index_put_ with a boolean mask, as speculative decoding uses to
// write accepted draft tokens into their output slots), written for this corpus: element i writes
// out[dst[i]] only where mask[i] is set. Race-free when the destinations of the masked elements
// are distinct; duplicates among unmasked elements do not matter.
#include "../real/real_prelude.h"

extern "C" __global__ void index_masked_scatter(const int* __restrict__ tokens, const unsigned char* __restrict__ mask,
                                                const int* __restrict__ dst, int* __restrict__ out, const int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (mask[i]) out[dst[i]] = tokens[i];
}
