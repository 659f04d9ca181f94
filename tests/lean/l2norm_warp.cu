// L2-normalises each row with one warp (a block of 32 threads) per row: a shuffle-down sum of
// squares, whose total (in lane 0) is broadcast to the warp with __shfl_sync.
extern "C" __global__ void l2norm_warp(float* out, const float* x, int rows, int cols) {
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int lane = threadIdx.x;
  float ss = 0.0f;
  for (int c = lane; c < cols; c += 32) ss += xr[c] * xr[c];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_down_sync(0xffffffff, ss, o);
  float total = __shfl_sync(0xffffffff, ss, 0);
  float inv = rsqrtf(total);
  for (int c = lane; c < cols; c += 32) out[(size_t)blockIdx.x * cols + c] = xr[c] * inv;
}
