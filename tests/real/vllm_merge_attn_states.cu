// Modelled on vllm-project/vllm csrc/attention/merge_attn_states.cu, merge_attn_states_kernel<
// scalar_t, NUM_THREADS>, commit 0150b0ba25c7ff3974d0e8c203f39bf5442941ff, Apache-2.0 licence.
// Written for LARK's corpus from that kernel's structure (one thread per 128-bit pack of a
// (token, head) row, the two partial attention outputs weighted by their log-sum-exp values,
// the merged LSE written by the first pack's thread); not a copy of its text. Instantiated for
// __nv_bfloat16 with 128 threads. Host launch in vLLM: block 128,
// grid ceil(num_tokens * num_heads * (head_size / 8) / 128).
#include "real_prelude.h"

namespace vllm {
template <typename scalar_t, const unsigned NUM_THREADS>
__global__ void merge_attn_states_kernel(scalar_t* output, float* output_lse, const scalar_t* prefix_output, const float* prefix_lse,
                                         const scalar_t* suffix_output, const float* suffix_lse, const unsigned num_tokens,
                                         const unsigned num_heads, const unsigned head_size) {
  const unsigned pack = 16 / sizeof(scalar_t);
  const unsigned threads_per_head = head_size / pack;
  const unsigned gid = blockIdx.x * NUM_THREADS + threadIdx.x;
  if (gid >= num_tokens * num_heads * threads_per_head) return;
  const unsigned token_head = gid / threads_per_head;
  const unsigned pack_idx = gid % threads_per_head;
  const unsigned token = token_head / num_heads;
  const unsigned head = token_head % num_heads;
  const unsigned pack_offset = pack_idx * pack;
  const unsigned row = token * num_heads * head_size + head * head_size;

  float p_lse = prefix_lse[head * num_tokens + token];
  float s_lse = suffix_lse[head * num_tokens + token];
  p_lse = __builtin_isinf(p_lse) ? -INFINITY : p_lse;
  s_lse = __builtin_isinf(s_lse) ? -INFINITY : s_lse;
  const float hi = fmaxf(p_lse, s_lse);
  const float p_se = expf(p_lse - hi);
  const float s_se = expf(s_lse - hi);
  const float total = p_se + s_se;
  const float p_w = p_se / total, s_w = s_se / total;

  if (pack_offset < head_size) {
    uint4 p4 = reinterpret_cast<const uint4*>(prefix_output + row)[pack_offset / pack];
    uint4 s4 = reinterpret_cast<const uint4*>(suffix_output + row)[pack_offset / pack];
    uint4 o4;
    const scalar_t* pv = reinterpret_cast<const scalar_t*>(&p4);
    const scalar_t* sv = reinterpret_cast<const scalar_t*>(&s4);
    scalar_t* ov = reinterpret_cast<scalar_t*>(&o4);
#pragma unroll
    for (unsigned i = 0; i < pack; ++i) ov[i] = (scalar_t)((float)pv[i] * p_w + (float)sv[i] * s_w);
    reinterpret_cast<uint4*>(output + row)[pack_offset / pack] = o4;
  }
  if (output_lse != nullptr && pack_idx == 0) output_lse[head * num_tokens + token] = logf(total) + hi;
}
template __global__ void merge_attn_states_kernel<__nv_bfloat16, 128>(__nv_bfloat16*, float*, const __nv_bfloat16*, const float*,
                                                                      const __nv_bfloat16*, const float*, const unsigned, const unsigned,
                                                                      const unsigned);
}  // namespace vllm
