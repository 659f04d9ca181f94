// SwiGLU activation (vLLM's silu_and_mul): each input row is [gate | up], out = silu(gate) * up.
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

extern "C" __global__ void silu_and_mul(float* out, const float* input, int d) {
  const int token = blockIdx.x;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float gate = input[(size_t)token * 2 * d + i];
    float up = input[(size_t)token * 2 * d + d + i];
    out[(size_t)token * d + i] = silu(gate) * up;
  }
}
