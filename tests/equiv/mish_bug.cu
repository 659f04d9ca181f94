// Mish with softplus written as log(exp(x)) (the 1 + left out): the kernel computes x * tanh(x).
extern "C" __global__ void mish_bug(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = v * tanhf(logf(expf(v)));
  }
}
