// Rotary position embedding (GPT-NeoX layout) applied in place to q: one block per token,
// each thread rotates pairs (i, i + head_size/2) of some head.
extern "C" __global__ void rope_neox(float* q, const int* positions, const float* cos_sin_cache, int num_heads,
                                     int head_size) {
  int token = blockIdx.x;
  int pos = positions[token];
  int half = head_size / 2;
  const float* cos_ptr = cos_sin_cache + pos * head_size;
  const float* sin_ptr = cos_ptr + half;
  for (int idx = threadIdx.x; idx < num_heads * half; idx += blockDim.x) {
    int head = idx / half;
    int i = idx % half;
    float* qh = q + ((size_t)token * num_heads + head) * head_size;
    float c = cos_ptr[i], s = sin_ptr[i];
    float x1 = qh[i], x2 = qh[i + half];
    qh[i] = x1 * c - x2 * s;
    qh[i + half] = x2 * c + x1 * s;
  }
}
