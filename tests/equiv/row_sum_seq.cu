// Row sums, one thread per row, each summing its row left to right (no cooperation between threads).
extern "C" __global__ void row_sum_seq(float* out, const float* x, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += x[(size_t)r * cols + c];
    out[r] = s;
  }
}
