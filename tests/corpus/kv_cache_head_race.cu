// KV-cache write, flat layout: key row of token t goes to slot slot_mapping[t].
extern "C" __global__ void kv_cache_head_race(const float* key, float* key_cache, const long long* slot_mapping,
                                              int num_heads, int head_size) {
  int token = blockIdx.x;
  long long slot = slot_mapping[token];
  for (int i = threadIdx.x; i < num_heads * head_size; i += blockDim.x) {
    int head = i / head_size;
    int d = i % head_size;
    key_cache[slot * num_heads * head_size + d] = key[((long long)token * num_heads + head) * head_size + d];
  }
}
