// Index-buffer kernel for LARK's corpus: applying a repetition penalty to the logits of the tokens
// a request has already produced (the sampler step of serving engines; vLLM applies it through
// scatter/bincount), written naively for this corpus: one block per request, thread j rescales
// logits[req, history[req][j]]. Race-free only when a request's history has no repeated token;
// a repeated token makes two threads read-modify-write the same logit.
#include "../real/real_prelude.h"

extern "C" __global__ void index_repetition_penalty(float* __restrict__ logits, const int* __restrict__ history, const int history_len,
                                                    const int vocab_size, const float penalty) {
  const int req = blockIdx.x;
  for (int j = threadIdx.x; j < history_len; j += blockDim.x) {
    const int token = history[req * history_len + j];
    float* l = logits + (long long)req * vocab_size + token;
    *l = *l > 0.0f ? *l / penalty : *l * penalty;
  }
}
