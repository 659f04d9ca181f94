// Mish, x * tanh(softplus(x)), one thread per element: log1pf is ln(1 + x) (the prelude writes
// it as logf(1 + x)), compared with F.mish.
extern "C" __global__ void mish(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = v * tanhf(log1pf(expf(v)));
  }
}
