// Modelled on karpathy/llm.c llmc/adamw.cuh, adamw_kernel3 / adamw_update, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (one element per thread, blockIdx.y selecting a parameter shard through
// strides, moments updated with lerp, optional FP32 master copy); not a copy of its text.
// llm.c rounds the parameter stochastically into bf16; here parameters are float and stored as is.
// Host launch in llm.c: block 512, grid (ceil(n / 512), num_slices).
#include "real_prelude.h"

static __device__ __forceinline__ float lerp_to(float start, float end, float w) { return fmaf(w, end, fmaf(-w, start, start)); }

extern "C" __global__ void llmc_adamw(float* params, float* master_params, const float* grads, float* m_mem, float* v_mem,
                                      unsigned long num_parameters, long w_stride, long g_stride, long s_stride,
                                      float learning_rate, float beta1, float beta2, float beta1_correction,
                                      float beta2_correction, float eps, float weight_decay, float grad_scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_parameters) return;
  float* p = params + blockIdx.y * w_stride;
  float* master = master_params ? master_params + blockIdx.y * s_stride : nullptr;
  const float* g = grads + blockIdx.y * g_stride;
  float* m1 = m_mem + blockIdx.y * s_stride;
  float* m2 = v_mem + blockIdx.y * s_stride;

  float grad = grad_scale * g[i];
  float m = lerp_to(grad, m1[i], beta1);
  m1[i] = m;
  float v = lerp_to(grad * grad, m2[i], beta2);
  m2[i] = v;
  m /= beta1_correction;
  v /= beta2_correction;
  float old = master != nullptr ? master[i] : p[i];
  float updated = old - learning_rate * (m / (sqrtf(v) + eps) + weight_decay * old);
  p[i] = updated;
  if (master != nullptr) master[i] = updated;
}
