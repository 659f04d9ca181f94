// Per-row attention score q·k / sqrt(head_dim) with head_dim 128, one thread per row: the
// division by sqrt(128) is a multiplication by its rounded reciprocal, as kernels write it.
extern "C" __global__ void scaled_dot(float* out, const float* q, const float* k, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < 128; ++j) acc += q[r * 128 + j] * k[r * 128 + j];
    out[r] = acc * 0.08838834764f;
  }
}
