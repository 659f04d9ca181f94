// Rotary position embedding, GPT-NeoX layout (dimension i pairs with i + head_dim/2), from q into out:
// one block per token, one thread per (head, pair); cos/sin tables are [max_pos, head_dim/2].
extern "C" __global__ void rope_halves_bug(float* out, const float* q, const int* positions, const float* cos_cache,
                                           const float* sin_cache, int tokens, int heads, int head_dim) {
  int t = blockIdx.x;
  if (t >= tokens) return;
  int half = head_dim / 2;
  int pos = positions[t];
  for (int idx = threadIdx.x; idx < heads * half; idx += blockDim.x) {
    int h = idx / half, i = idx % half;
    size_t base = ((size_t)t * heads + h) * head_dim;
    float c = cos_cache[pos * half + i], s = sin_cache[pos * half + i];
    float x1 = q[base + i], x2 = q[base + i + half];
    out[base + i] = x1 * c + x2 * s;
    out[base + i + half] = x2 * c - x1 * s;
  }
}
