// Modelled on NVIDIA/Megatron-LM megatron/fused_kernels/scaled_masked_softmax.h,
// scaled_masked_softmax_warp_forward<input_t, output_t, acc_t, log2_elements>, commit
// 116820a58f1873917ce95e33e0ab58576b4b10ca, Apache-2.0 licence. Written for LARK's corpus from that
// kernel's structure (one virtual warp of min(2^log2, 32) lanes per row, WARP_BATCH rows per warp,
// WARP_ITERATIONS elements per lane, 4-element vector copies when WARP_ITERATIONS >= 4, the byte
// mask loaded as a 4-byte pack, butterfly max/sum over the virtual warp with a shuffle width,
// bert-style or gpt2-style mask row); not a copy of its text. Instantiated for half with
// log2_elements = 10 (1024 keys, 32 lanes x 32 elements, one row per warp) and 4 (16 keys,
// half-warps of 16 lanes, two rows per virtual warp), outside the original's anonymous namespace.
// Host launch in Megatron: 128 threads per block = (warp_size, 128 / warp_size), grid
// (query_seq_len / batches_per_block, attn_heads, batches), no shared memory.
#include "real_prelude.h"

template <typename T, int N>
__device__ __forceinline__ void copy_pack(T* dst, const T* src);
template <>
__device__ __forceinline__ void copy_pack<half, 1>(half* dst, const half* src) { *dst = *src; }
template <>
__device__ __forceinline__ void copy_pack<half, 4>(half* dst, const half* src) { *((float2*)dst) = *((const float2*)src); }
template <>
__device__ __forceinline__ void copy_pack<uint8_t, 1>(uint8_t* dst, const uint8_t* src) { *dst = *src; }
template <>
__device__ __forceinline__ void copy_pack<uint8_t, 4>(uint8_t* dst, const uint8_t* src) { *((__half2*)dst) = *((const __half2*)src); }

template <int ROWS, int LANES>
__device__ __forceinline__ void butterfly_max(float* v) {
#pragma unroll
  for (int d = LANES / 2; d > 0; d /= 2) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      float o = __shfl_xor_sync(0xffffffffu, v[r], d, LANES);
      v[r] = v[r] < o ? o : v[r];
    }
  }
}
template <int ROWS, int LANES>
__device__ __forceinline__ void butterfly_sum(float* v) {
#pragma unroll
  for (int d = LANES / 2; d > 0; d /= 2) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) v[r] += __shfl_xor_sync(0xffffffffu, v[r], d, LANES);
  }
}

template <typename in_t, typename out_t, typename acc_t, int LOG2_N>
__global__ void scaled_masked_softmax_warp_forward(out_t* dst, const in_t* src, const uint8_t* mask, const acc_t scale,
                                                   int micro_batch_size, int element_count, int pad_batches) {
  constexpr int POW2 = 1 << LOG2_N;
  constexpr int LANES = POW2 < 32 ? POW2 : 32;
  constexpr int ITERS = POW2 / LANES;
  constexpr int ROWS = POW2 <= 128 ? 2 : 1;
  constexpr int PACK = ITERS < 4 ? 1 : 4;

  // blockDim = (LANES, warps per block); gridDim = (query rows / rows per block, heads, batches)
  int first_row = (blockDim.y * (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) + threadIdx.y) * ROWS;
  int mask_first_row;
  if (pad_batches != 1)
    mask_first_row = (blockDim.y * (blockIdx.x + gridDim.x * blockIdx.z) + threadIdx.y) * ROWS;  // one mask per batch
  else
    mask_first_row = (blockDim.y * blockIdx.x + threadIdx.y) * ROWS;  // one mask shared by all batches

  int rows_here = micro_batch_size - first_row;
  if (rows_here > ROWS) rows_here = ROWS;
  int lane = threadIdx.x;

  src += first_row * element_count + PACK * lane;
  dst += first_row * element_count + PACK * lane;
  mask += mask_first_row * element_count + PACK * lane;

  acc_t x[ROWS][ITERS];
  in_t in_pack[PACK];
  uint8_t mask_pack[PACK];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    int limit = (r >= rows_here) ? 0 : element_count;
#pragma unroll
    for (int it = 0; it < ITERS; it += PACK) {
      int col = PACK * lane + it * LANES;
      if (col < limit) {
        int off = r * element_count + it * LANES;
        copy_pack<in_t, PACK>(in_pack, src + off);
        copy_pack<uint8_t, PACK>(mask_pack, mask + off);
#pragma unroll
        for (int e = 0; e < PACK; ++e) x[r][it + e] = mask_pack[e] != 1 ? (acc_t)in_pack[e] * scale : (acc_t)-10000.0f;
      } else {
#pragma unroll
        for (int e = 0; e < PACK; ++e) x[r][it + e] = -__builtin_inff();
      }
    }
  }

  acc_t row_max[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    row_max[r] = x[r][0];
#pragma unroll
    for (int it = 1; it < ITERS; ++it) row_max[r] = row_max[r] > x[r][it] ? row_max[r] : x[r][it];
  }
  butterfly_max<ROWS, LANES>(row_max);

  acc_t row_sum[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    row_sum[r] = 0.0f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      x[r][it] = expf(x[r][it] - row_max[r]);
      row_sum[r] += x[r][it];
    }
  }
  butterfly_sum<ROWS, LANES>(row_sum);

  out_t out_pack[PACK];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    if (r >= rows_here) break;
#pragma unroll
    for (int it = 0; it < ITERS; it += PACK) {
      int col = PACK * lane + it * LANES;
      if (col < element_count) {
#pragma unroll
        for (int e = 0; e < PACK; ++e) out_pack[e] = (out_t)(x[r][it + e] / row_sum[r]);
        copy_pack<out_t, PACK>(dst + r * element_count + it * LANES, out_pack);
      } else {
        break;
      }
    }
  }
}

template __global__ void scaled_masked_softmax_warp_forward<half, half, float, 10>(half*, const half*, const uint8_t*, const float, int, int, int);
template __global__ void scaled_masked_softmax_warp_forward<half, half, float, 4>(half*, const half*, const uint8_t*, const float, int, int, int);
