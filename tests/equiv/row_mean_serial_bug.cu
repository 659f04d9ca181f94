// Row means with one thread per row, walking the row serially. BUG: divides by the number of
// rows instead of the row length. Right whenever rows == cols, so derived shapes must give
// the two sizes different values to see it.
extern "C" __global__ void row_mean_serial_bug(float* out, const float* x, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float total = 0.0f;
  for (int c = 0; c < cols; ++c) total += x[row * cols + c];
  out[row] = total / rows;
}
