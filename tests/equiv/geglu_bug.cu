// GeGLU (tanh GELU): each input row is [gate | up] and out = gelu(gate) * up; one block per token.
__device__ __forceinline__ float gelu(float x) {
  float e = __expf(2.0f * (0.7978845608f * (x + 0.044715f * x * x * x)));
  return 0.5f * x * (1.0f + (e - 1.0f) / (e + 1.0f));
}

extern "C" __global__ void geglu_bug(float* out, const float* input, int tokens, int d) {
  int t = blockIdx.x;
  if (t >= tokens) return;
  const float* row = input + (size_t)t * 2 * d;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float gate = row[d + i];
    float up = row[i];
    out[(size_t)t * d + i] = gelu(gate) * up;
  }
}
