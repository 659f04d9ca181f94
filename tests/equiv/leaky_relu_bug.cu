// Leaky ReLU with the slope written as the value: x < 0 gives 0.01 instead of 0.01 * x.
extern "C" __global__ void leaky_relu_bug(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = v > 0.0f ? v : 0.01f;
  }
}
