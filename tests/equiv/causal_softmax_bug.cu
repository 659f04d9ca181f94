// Causal softmax of attention scores (q_len x k_len, queries are the last q_len of the k_len
// positions), one block of 256 threads per query row: keys 0 .. visible-1 are kept, later ones get
// probability 0.
#define THREADS 256

extern "C" __global__ void causal_softmax_bug(float* p, const float* scores, int q_len, int k_len) {
  __shared__ float red[THREADS];
  __shared__ float s_max, s_sum;
  int i = blockIdx.x;
  if (i >= q_len) return;  // block-uniform guard
  int visible = i + (k_len - q_len);  // query i sits at position i + k_len - q_len
  const float* sr = scores + (size_t)i * k_len;
  int tid = threadIdx.x;
  float m = -INFINITY;
  for (int j = tid; j < visible; j += THREADS) m = fmaxf(m, sr[j]);
  red[tid] = m;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  if (tid == 0) s_max = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int j = tid; j < visible; j += THREADS) sum += __expf(sr[j] - s_max);
  red[tid] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  if (tid == 0) s_sum = red[0];
  __syncthreads();
  for (int j = tid; j < k_len; j += THREADS)
    p[(size_t)i * k_len + j] = (j < visible) ? __expf(sr[j] - s_max) / s_sum : 0.0f;
}
