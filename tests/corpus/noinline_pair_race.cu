// Each thread writes out[2i] and out[2i+1] through a helper the compiler keeps as a call
// (__noinline__), but the helper's second store lands on the next thread's first element:
// out[i+1] instead of out[2i+1], a race between neighbouring threads.
__device__ __noinline__ void store_pair(float* out, int i, float v) {
  out[2 * i] = v;
  out[i + 1] = v * 0.5f;
}

extern "C" __global__ void noinline_pair_race(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store_pair(out, i, x[i]);
}
