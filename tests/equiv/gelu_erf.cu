// GELU in its exact form, 0.5 x (1 + erf(x / sqrt 2)), one thread per element: `erff` is a
// libdevice call (no PTX instruction computes it).
extern "C" __global__ void gelu_erf(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}
