// 2-D 5-point Laplacian: a 16x16 tile plus a one-cell halo in shared memory, clamped at the image border.
#define B 16

extern "C" __global__ void laplace_2d(const float* in, float* out, int w, int h) {
  __shared__ float t[B + 2][B + 2];
  int x = blockIdx.x * B + threadIdx.x, y = blockIdx.y * B + threadIdx.y;
  int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  int cx = min(x, w - 1), cy = min(y, h - 1);
  t[ty][tx] = in[cy * w + cx];
  if (threadIdx.x == 0) t[ty][0] = in[cy * w + max(cx - 1, 0)];
  if (threadIdx.x == B - 1) t[ty][B + 1] = in[cy * w + min(cx + 1, w - 1)];
  if (threadIdx.y == 0) t[0][tx] = in[max(cy - 1, 0) * w + cx];
  if (threadIdx.y == B - 1) t[B + 1][tx] = in[min(cy + 1, h - 1) * w + cx];
  __syncthreads();
  if (x < w && y < h)
    out[y * w + x] = t[ty - 1][tx] + t[ty + 1][tx] + t[ty][tx - 1] + t[ty][tx + 1] - 4.0f * t[ty][tx];
}
