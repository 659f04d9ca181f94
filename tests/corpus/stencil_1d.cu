// 1-D 7-point stencil; the block's inputs plus a radius-3 halo are staged in shared memory.
#define RADIUS 3
#define BLOCK 256

extern "C" __global__ void stencil_1d(const float* in, float* out, int n) {
  __shared__ float temp[BLOCK + 2 * RADIUS];
  int g = blockIdx.x * BLOCK + threadIdx.x;
  int l = threadIdx.x + RADIUS;
  temp[l] = in[g];
  if (threadIdx.x < RADIUS) {
    temp[l - RADIUS] = (g >= RADIUS) ? in[g - RADIUS] : 0.0f;
    temp[l + BLOCK] = (g + BLOCK < n) ? in[g + BLOCK] : 0.0f;
  }
  __syncthreads();
  float result = 0.0f;
  for (int k = -RADIUS; k <= RADIUS; ++k) result += temp[l + k];
  out[g] = result;
}
