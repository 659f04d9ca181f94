// Inclusive Hillis-Steele scan of each block's 512 elements in shared memory.
extern "C" __global__ void scan_hillis_steele(const float* in, float* out, int n) {
  __shared__ float temp[512];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  temp[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset <<= 1) {
    float v = 0.0f;
    if (tid >= offset) v = temp[tid - offset];
    __syncthreads();
    temp[tid] += v;
    __syncthreads();
  }
  if (i < n) out[i] = temp[tid];
}
