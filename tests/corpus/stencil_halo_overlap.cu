// 1-D 7-point stencil; the block's inputs plus a radius-3 halo are staged in shared memory.
#define R 3
#define BLOCK 256

extern "C" __global__ void stencil_halo_overlap(const float* in, float* out, int n) {
  __shared__ float temp[BLOCK + 2 * R];
  int g = blockIdx.x * BLOCK + threadIdx.x;
  int l = threadIdx.x + R;
  temp[l] = in[g];
  if (threadIdx.x < R) {
    temp[l - R] = (g >= R) ? in[g - R] : 0.0f;
    temp[l + BLOCK - 1] = (g + BLOCK < n) ? in[g + BLOCK] : 0.0f;
  }
  __syncthreads();
  float result = 0.0f;
  for (int k = -R; k <= R; ++k) result += temp[l + k];
  out[g] = result;
}
