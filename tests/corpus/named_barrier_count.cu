// Per block: stage x in shared memory, synchronise on named barrier 1 for all 128 threads of the
// block (bar.sync 1, 128), take each element minus its right neighbour, and count the positive
// differences with __syncthreads_count (bar.red.popc); thread 0 writes the block's count.
static __device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

extern "C" __global__ void named_barrier_count(const float* x, int* counts) {
  __shared__ float s[128];
  int t = threadIdx.x;
  int i = blockIdx.x * 128 + t;
  s[t] = x[i];
  named_barrier_sync(1, 128);
  float d = s[t] - s[(t + 1) % 128];
  int positive = __nvvm_bar0_popc(d > 0.0f);
  if (t == 0) counts[blockIdx.x] = positive;
}
