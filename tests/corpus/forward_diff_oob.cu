// Forward difference of a 1-D signal.
extern "C" __global__ void forward_diff_oob(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i + 1] - in[i];
  }
}
