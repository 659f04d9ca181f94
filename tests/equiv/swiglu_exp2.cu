// SwiGLU with the sigmoid written through exp2: exp(-x) = exp2(-x * log2(e)).
static __device__ __forceinline__ float exp2f(float x) { return __nvvm_ex2_approx_f(x); }

extern "C" __global__ void swiglu_exp2(float* out, const float* input, int tokens, int d) {
  int t = blockIdx.x;
  if (t >= tokens) return;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float gate = input[(size_t)t * 2 * d + i];
    float up = input[(size_t)t * 2 * d + d + i];
    float sig = 1.0f / (1.0f + exp2f(-gate * 1.4426950f));
    out[(size_t)t * d + i] = gate * sig * up;
  }
}
