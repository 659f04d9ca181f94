// Online (single-pass) row softmax, one block of 256 threads per row (cols >= 256): each thread keeps
// a running max m and a sum s of exp(x - m), rescaled whenever m grows; the (m, s) pairs are merged
// by a shared-memory tree; a second sweep writes exp(x - m) / s.
#define THREADS 256

extern "C" __global__ void softmax_online(float* y, const float* x, int rows, int cols) {
  __shared__ float red_m[THREADS];
  __shared__ float red_s[THREADS];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float m = xr[tid];  // cols >= THREADS: every thread owns at least one element
  float s = 1.0f;
  for (int c = tid + THREADS; c < cols; c += THREADS) {
    float v = xr[c];
    float m_new = fmaxf(m, v);
    s = s * __expf(m - m_new) + __expf(v - m_new);
    m = m_new;
  }
  red_m[tid] = m;
  red_s[tid] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) {
      float m1 = red_m[tid], m2 = red_m[tid + k];
      float mm = fmaxf(m1, m2);
      red_s[tid] = red_s[tid] * __expf(m1 - mm) + red_s[tid + k] * __expf(m2 - mm);
      red_m[tid] = mm;
    }
    __syncthreads();
  }
  float row_max = red_m[0];
  float inv = 1.0f / red_s[0];
  for (int c = tid; c < cols; c += THREADS) y[(size_t)blockIdx.x * cols + c] = __expf(xr[c] - row_max) * inv;
}
