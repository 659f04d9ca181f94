// torch.cat([a, b], dim=-1), one block per row. BUG: b's row is addressed with a's row length
// (r * ca), so every row but the first reads the wrong part of b.
extern "C" __global__ void concat_rows_bug(float* out, const float* a, const float* b, int rows, int ca, int cb) {
  int r = blockIdx.x;
  int width = ca + cb;
  if (r >= rows) return;
  for (int c = threadIdx.x; c < width; c += blockDim.x)
    out[r * width + c] = c < ca ? a[r * ca + c] : b[r * ca + (c - ca)];
}
