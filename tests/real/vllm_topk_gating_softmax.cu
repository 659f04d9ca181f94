// Modelled on vllm-project/vllm csrc/moe/topk_softmax_kernels.cu, topkGatingSoftmax<VPT,
// NUM_EXPERTS, WARPS_PER_CTA, BYTES_PER_LDG, WARP_SIZE, IndType> (itself adapted from
// NVIDIA/TensorRT-LLM), commit 0112cf233e0c60674c2844a09695ddeb2b901dc0, Apache-2.0 licence.
// Written for LARK's corpus from that kernel's structure (a row of NUM_EXPERTS gate logits shared
// by THREADS_PER_ROW lanes, 128-bit loads into a register chunk, butterfly max/sum/argmax over
// sub-warp groups with width-limited full-mask shuffles, rows past num_rows leaving early, the
// winning lane clearing its value with a computed register index, one lane per row writing the
// top-k outputs); not a copy of its text. Instantiated as vLLM does for 64 experts:
// VPT = 4, WARPS_PER_CTA = 4, BYTES_PER_LDG = 16, so 16 lanes per row and 2 rows per warp.
// Host launch in vLLM: block (32, 4), grid ceil(ceil(num_rows / 2) / 4).
#include "real_prelude.h"

namespace vllm {
namespace moe {
template <int VPT, int NUM_EXPERTS, int WARPS_PER_CTA, int BYTES_PER_LDG, typename IndType>
__global__ void __launch_bounds__(WARPS_PER_CTA * 32)
    topk_gating_softmax(const float* input, const bool* finished, float* output, const int num_rows, IndType* indices,
                        int* source_rows, const int k, const int start_expert, const int end_expert) {
  constexpr int ELTS_PER_LDG = BYTES_PER_LDG / sizeof(float);
  constexpr int THREADS_PER_ROW = NUM_EXPERTS / VPT;
  constexpr int LDG_PER_THREAD = VPT / ELTS_PER_LDG;
  constexpr int ROWS_PER_WARP = 32 * VPT / NUM_EXPERTS;
  constexpr int ROWS_PER_CTA = WARPS_PER_CTA * ROWS_PER_WARP;
  constexpr int COLS_PER_GROUP_LDG = ELTS_PER_LDG * THREADS_PER_ROW;

  const int row = blockIdx.x * ROWS_PER_CTA + threadIdx.y * ROWS_PER_WARP + threadIdx.x / THREADS_PER_ROW;
  if (row >= num_rows) return;
  const bool active = finished ? !finished[row] : true;

  const int lane_in_row = threadIdx.x % THREADS_PER_ROW;
  const int first_col = lane_in_row * ELTS_PER_LDG;
  const float4* src = reinterpret_cast<const float4*>(input + row * NUM_EXPERTS + first_col);
  float chunk[VPT];
#pragma unroll
  for (int l = 0; l < LDG_PER_THREAD; ++l) {
    float4 v = src[l * THREADS_PER_ROW];
    chunk[l * 4 + 0] = v.x;
    chunk[l * 4 + 1] = v.y;
    chunk[l * 4 + 2] = v.z;
    chunk[l * 4 + 3] = v.w;
  }

  float hi = chunk[0];
#pragma unroll
  for (int i = 1; i < VPT; ++i) hi = max(hi, chunk[i]);
#pragma unroll
  for (int m = THREADS_PER_ROW / 2; m > 0; m /= 2) hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, m, THREADS_PER_ROW));

  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    chunk[i] = expf(chunk[i] - hi);
    sum += chunk[i];
  }
#pragma unroll
  for (int m = THREADS_PER_ROW / 2; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m, THREADS_PER_ROW);
  const float inv = 1.0f / sum;
#pragma unroll
  for (int i = 0; i < VPT; ++i) chunk[i] *= inv;

  for (int kk = 0; kk < k; ++kk) {
    float best = chunk[0];
    int expert = first_col;
#pragma unroll
    for (int l = 0, col = first_col; l < LDG_PER_THREAD; ++l, col += COLS_PER_GROUP_LDG) {
#pragma unroll
      for (int e = 0; e < ELTS_PER_LDG; ++e) {
        float v = chunk[l * ELTS_PER_LDG + e];
        if (v > best) {
          best = v;
          expert = col + e;
        }
      }
    }
#pragma unroll
    for (int m = THREADS_PER_ROW / 2; m > 0; m /= 2) {
      float other = __shfl_xor_sync(0xffffffffu, best, m, THREADS_PER_ROW);
      int other_expert = __nvvm_shfl_sync_bfly_i32(0xffffffffu, expert, m, ((32 - THREADS_PER_ROW) << 8) | 0x1f);
      if (other > best || (other == best && other_expert < expert)) {
        best = other;
        expert = other_expert;
      }
    }
    if (lane_in_row == 0) {
      const bool mine = expert >= start_expert && expert < end_expert;
      const int idx = k * row + kk;
      output[idx] = best;
      indices[idx] = (active && mine) ? (expert - start_expert) : NUM_EXPERTS;
      source_rows[idx] = kk * num_rows + row;
    }
    if (kk + 1 < k) {
      const int group = expert / COLS_PER_GROUP_LDG;
      const int owner = (expert / ELTS_PER_LDG) % THREADS_PER_ROW;
      if (lane_in_row == owner) chunk[group * ELTS_PER_LDG + expert % ELTS_PER_LDG] = -10000.0f;
    }
  }
}
template __global__ void topk_gating_softmax<4, 64, 4, 16, int>(const float*, const bool*, float*, const int, int*, int*, const int, const int,
                                                                const int);
}  // namespace moe
}  // namespace vllm
