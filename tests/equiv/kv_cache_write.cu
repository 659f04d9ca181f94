// Paged KV-cache write: token t's key [heads, head_dim] goes to slot s = slot_mapping[t], i.e. cache
// block s / block_size at offset s % block_size, in a cache laid out [num_blocks, heads, block_size, head_dim].
extern "C" __global__ void kv_cache_write(float* key_cache, const float* key, const long long* slot_mapping, int heads,
                                          int head_dim, int block_size) {
  int t = blockIdx.x;
  long long slot = slot_mapping[t];
  long long blk = slot / block_size, off = slot % block_size;
  for (int i = threadIdx.x; i < heads * head_dim; i += blockDim.x) {
    int h = i / head_dim, d = i % head_dim;
    key_cache[((blk * heads + h) * block_size + off) * head_dim + d] = key[(size_t)t * heads * head_dim + i];
  }
}
