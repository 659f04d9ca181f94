// The same block sums without the barrier between the slot stores and thread 0's reads: the
// stores of equal values are tolerated among themselves, but thread 0 reads slots other warps
// are still writing, a real race.
extern "C" __global__ void warp_sums_all_lanes_nosync(const float* x, float* out, int n) {
  __shared__ float sums[8];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  float v = i < n ? x[i] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  sums[tid / 32] = v;
  if (tid == 0) {
    float s = 0.0f;
    for (int w = 0; w < 8; ++w) s += sums[w];
    out[blockIdx.x] = s;
  }
}
