// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/opt-step-adamw.cu, opt_step_adamw_f32, commit
// 34a50172faa24b5139ce1e754d2c26795ddca25f, MIT licence. Written for LARK's corpus from that
// kernel's structure (one parameter per thread, the seven hyper-parameters read from a device
// buffer, both moments updated in place, decoupled weight decay); not a copy of its text.
// Host launch in llama.cpp: block 256, grid ceil(k / 256).
#include "ggml_common.h"

static __global__ void opt_step_adamw_f32(float* __restrict__ x, const float* __restrict__ g, float* __restrict__ g_m, float* __restrict__ g_v,
                                          const float* __restrict__ pars, const long long k) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= k) return;
  const float alpha = pars[0], beta1 = pars[1], beta2 = pars[2], eps = pars[3], wd = pars[4], beta1h = pars[5], beta2h = pars[6];
  const float gi = g[i];
  const float m = g_m[i] * beta1 + gi * (1.0f - beta1);
  const float v = g_v[i] * beta2 + gi * gi * (1.0f - beta2);
  g_m[i] = m;
  g_v[i] = v;
  const float mh = m * beta1h;
  const float vh = sqrtf(v * beta2h) + eps;
  x[i] = x[i] * (1.0f - alpha * wd) - alpha * mh / vh;
}
