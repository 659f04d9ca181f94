// Average pooling with window 2 and stride 2 over a 1-D signal.
extern "C" __global__ void avgpool2_race(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i / 2] = 0.5f * (in[i & ~1] + in[i | 1]);
  }
}
