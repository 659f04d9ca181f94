// Single-head attention, one block of 128 threads per query row (k_len <= 128): one thread per key
// computes its scaled score, block max and sum reductions give the softmax, then one thread per
// output column mixes the value rows.
#define THREADS 128

extern "C" __global__ void attention_row_bug(float* out, const float* q, const float* k, const float* v, int q_len, int k_len,
                                             int d) {
  __shared__ float p[THREADS];
  __shared__ float red[THREADS];
  if (blockIdx.x >= q_len) return;  // block-uniform guard
  const float* qi = q + (size_t)blockIdx.x * d;
  int j = threadIdx.x;
  float scale = rsqrtf((float)d);
  float score = -INFINITY;
  if (j < k_len) {
    float dot = 0.0f;
    for (int c = 0; c < d; ++c) dot += qi[c] * k[(size_t)j * d + c];
    score = dot;
  }
  red[j] = score;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (j < s) red[j] = fmaxf(red[j], red[j + s]);
    __syncthreads();
  }
  float m = red[0];
  float e = (j < k_len) ? __expf(score - m) : 0.0f;
  p[j] = e;
  __syncthreads();
  red[j] = e;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (j < s) red[j] += red[j + s];
    __syncthreads();
  }
  float inv = 1.0f / red[0];
  for (int c = j; c < d; c += THREADS) {
    float acc = 0.0f;
    for (int t = 0; t < k_len; ++t) acc += p[t] * v[(size_t)t * d + c];
    out[(size_t)blockIdx.x * d + c] = acc * inv;
  }
}
