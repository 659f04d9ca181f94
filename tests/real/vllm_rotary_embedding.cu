// Modelled on vllm-project/vllm csrc/pos_encoding_kernels.cu, rotary_embedding_kernel<scalar_t,
// cache_t, IS_NEOX> with apply_rotary_embedding / apply_token_rotary_embedding, commit
// 0f5257e245116449bfbe78a87c22aeef632eba8f, Apache-2.0 licence. Written for LARK's corpus from
// that kernel's structure (one block per token, the token's position read from `positions` selects
// a row of the cos/sin cache, each thread rotates (x, y) pairs of query heads then key heads in
// place); not a copy of its text. Instantiated for half query/key and float cache, NeoX style.
// Host launch in vLLM: grid num_tokens, block min(num_heads * rot_dim / 2, 512).
#include "real_prelude.h"

namespace vllm {
template <typename scalar_t, typename cache_t, bool IS_NEOX>
__device__ __forceinline__ void rotate_pair(scalar_t* __restrict__ head, const cache_t* __restrict__ cos_ptr,
                                            const cache_t* __restrict__ sin_ptr, int rot_offset, int embed_dim) {
  int xi, yi;
  float c, s;
  if (IS_NEOX) {
    xi = rot_offset;
    yi = embed_dim + rot_offset;
    c = (float)__ldg(cos_ptr + xi);
    s = (float)__ldg(sin_ptr + xi);
  } else {
    xi = 2 * rot_offset;
    yi = 2 * rot_offset + 1;
    c = (float)__ldg(cos_ptr + xi / 2);
    s = (float)__ldg(sin_ptr + xi / 2);
  }
  const float x = (float)head[xi];
  const float y = (float)head[yi];
  head[xi] = (scalar_t)(x * c - y * s);
  head[yi] = (scalar_t)(y * c + x * s);
}

template <typename scalar_t, typename cache_t, bool IS_NEOX>
__global__ void rotary_embedding_kernel(const long long* __restrict__ positions, scalar_t* __restrict__ query,
                                        scalar_t* __restrict__ key, const cache_t* __restrict__ cos_sin_cache, const int rot_dim,
                                        const long query_stride, const long key_stride, const long head_stride, const int num_heads,
                                        const int num_kv_heads, const int head_size) {
  const int token = blockIdx.x;
  long long pos = positions[token];
  const cache_t* cache = cos_sin_cache + pos * rot_dim;
  const int embed_dim = rot_dim / 2;
  const cache_t* cos_ptr = cache;
  const cache_t* sin_ptr = cache + embed_dim;

  const int nq = num_heads * embed_dim;
  for (int i = threadIdx.x; i < nq; i += blockDim.x) {
    const int head = i / embed_dim;
    const long off = token * query_stride + head * head_stride;
    rotate_pair<scalar_t, cache_t, IS_NEOX>(query + off, cos_ptr, sin_ptr, i % embed_dim, embed_dim);
  }
  if (key != nullptr) {
    const int nk = num_kv_heads * embed_dim;
    for (int i = threadIdx.x; i < nk; i += blockDim.x) {
      const int head = i / embed_dim;
      const long off = token * key_stride + head * head_stride;
      rotate_pair<scalar_t, cache_t, IS_NEOX>(key + off, cos_ptr, sin_ptr, i % embed_dim, embed_dim);
    }
  }
}
template __global__ void rotary_embedding_kernel<half, float, true>(const long long*, half*, half*, const float*, const int, const long,
                                                                    const long, const long, const int, const int, const int);
}  // namespace vllm
