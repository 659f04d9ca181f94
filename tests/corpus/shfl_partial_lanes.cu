// Warp-level sum with shuffles; lane 0 of every warp writes the warp's total.
extern "C" __global__ void shfl_partial_lanes(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32;
  float v = (i < n) ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1) {
    if (lane < offset) {
      v += __shfl_down_sync(0xffffffff, v, offset);
    }
  }
  if (lane == 0) out[i / 32] = v;
}
