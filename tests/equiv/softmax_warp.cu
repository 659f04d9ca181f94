// Warp-per-row softmax: the maximum and the sum reduced across the warp with shuffles.
extern "C" __global__ void softmax_warp(float* y, const float* x, int rows, int cols) {
  int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  const float* xr = x + row * cols;
  int lane = threadIdx.x;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += __expf(xr[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) y[row * cols + c] = __expf(xr[c] - m) / s;
}
