// Inclusive prefix sum within each warp using __shfl_up_sync (each warp scans its own 32 elements).
static __device__ __forceinline__ float __shfl_up_sync(unsigned mask, float v, unsigned d) {
  return __nvvm_shfl_sync_up_f32(mask, v, d, 0);
}

extern "C" __global__ void warp_scan_shfl_up(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  float v = (i < n) ? in[i] : 0.0f;
  for (int d = 1; d < 32; d <<= 1) {
    float up = __shfl_up_sync(0xffffffff, v, d);
    if (lane >= d) v += up;
  }
  if (i < n) out[i] = v;
}
