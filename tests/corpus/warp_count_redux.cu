// Number of x[i] above a threshold: each warp adds its lanes' flags with redux.sync
// (__reduce_add_sync, as cooperative_groups::reduce on an int lowers on sm_80), then lane 0 of
// the warp adds the warp's count to a global counter with one atomicAdd.
static __device__ __forceinline__ int reduce_add_sync(unsigned mask, int v) { return __nvvm_redux_sync_add(v, mask); }

extern "C" __global__ void warp_count_redux(const float* x, int* count, float threshold, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int above = (i < n && x[i] > threshold) ? 1 : 0;
  int total = reduce_add_sync(0xffffffffu, above);
  if ((threadIdx.x & 31) == 0) atomicAdd(count, total);
}
