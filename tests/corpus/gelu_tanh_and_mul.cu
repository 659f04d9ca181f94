// GeGLU with the tanh approximation of GELU: out = gelu(x) * y for rows [x | y].
__device__ __forceinline__ float tanh_approx(float x) {
  float e = __expf(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);
}

__global__ void gelu_tanh_and_mul(float* out, const float* input, int d) {
  const float k0 = 0.7978845608f, k1 = 0.044715f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float x = input[blockIdx.x * 2 * d + i];
    float y = input[blockIdx.x * 2 * d + d + i];
    float g = 0.5f * x * (1.0f + tanh_approx(k0 * (x + k1 * x * x * x)));
    out[blockIdx.x * d + i] = g * y;
  }
}
