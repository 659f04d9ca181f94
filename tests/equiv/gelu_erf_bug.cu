// GELU in its exact form with the 1 / sqrt 2 scale left out of the erf: 0.5 x (1 + erf(x)).
extern "C" __global__ void gelu_erf_bug(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = 0.5f * v * (1.0f + erff(v));
  }
}
