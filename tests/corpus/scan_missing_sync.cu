// Inclusive Hillis-Steele scan of each block's 256 elements, in place in shared memory.
extern "C" __global__ void scan_missing_sync(const float* in, float* out, int n) {
  __shared__ float temp[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  temp[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset <<= 1) {
    float v = (tid >= offset) ? temp[tid - offset] : 0.0f;
    temp[tid] += v;
    __syncthreads();
  }
  if (i < n) out[i] = temp[tid];
}
