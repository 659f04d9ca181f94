// Row means, one block per row: warp sums with shuffles, per-warp totals in shared memory,
// then thread 0 adds the warp totals.
extern "C" __global__ void row_mean(float* out, const float* x, int rows, int cols) {
  __shared__ float partial[32];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < blockDim.x / 32; ++w) total += partial[w];
    out[blockIdx.x] = total / cols;
  }
}
