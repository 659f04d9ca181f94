// Modelled on karpathy/llm.c dev/cuda/crossentropy_forward.cu, crossentropy_forward_kernel1,
// commit f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (one thread per (b, t): the probability at the target id is read through the
// index buffer `targets`); not a copy of its text. Host launch in llm.c: block 128, grid ceil(B*T/128).
#include "real_prelude.h"

extern "C" __global__ void llmc_crossentropy_fwd(float* losses, const float* probs, const int* targets, int B, int T, int V) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B * T) {
    int b = i / T, t = i % T;
    const float* row = probs + b * T * V + t * V;
    int target = targets[b * T + t];
    losses[b * T + t] = -logf(row[target]);
  }
}
