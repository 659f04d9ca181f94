// Block sums: each warp reduces with a shuffle butterfly, after which every lane holds the warp's
// sum, and every lane stores it to the warp's shared slot on purpose (no lane-0 guard: the stores
// write the same value, a benign write-write race, tolerated as GPUVerify does); thread 0 adds
// the slots after the barrier.
extern "C" __global__ void warp_sums_all_lanes(const float* x, float* out, int n) {
  __shared__ float sums[8];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  float v = i < n ? x[i] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  sums[tid / 32] = v;
  __syncthreads();
  if (tid == 0) {
    float s = 0.0f;
    for (int w = 0; w < 8; ++w) s += sums[w];
    out[blockIdx.x] = s;
  }
}
