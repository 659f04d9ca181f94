// KV-cache write (vLLM reshape_and_cache, flat layout): token t's K and V rows go to slot slot_mapping[t].
extern "C" __global__ void reshape_and_cache(const float* key, const float* value, float* key_cache,
                                             float* value_cache, const long long* slot_mapping,
                                             int num_heads, int head_size) {
  const int token = blockIdx.x;
  const long long slot = slot_mapping[token];
  if (slot < 0) return;  // padding token
  const int n = num_heads * head_size;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    key_cache[slot * n + i] = key[(long long)token * n + i];
    value_cache[slot * n + i] = value[(long long)token * n + i];
  }
}
