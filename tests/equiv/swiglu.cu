// SwiGLU: each input row is [gate | up] and out = silu(gate) * up; one block per token.
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

extern "C" __global__ void swiglu(float* out, const float* input, int tokens, int d) {
  int t = blockIdx.x;
  if (t >= tokens) return;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float gate = input[(size_t)t * 2 * d + i];
    float up = input[(size_t)t * 2 * d + d + i];
    out[(size_t)t * d + i] = silu(gate) * up;
  }
}
