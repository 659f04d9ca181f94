// Modelled on vllm-project/vllm csrc/quantization/w8a8/fp8/per_token_group_quant.cu, commit
// e3b7e36d225b7b19e2993acd163c07ff082816af, per_token_group_quant_8bit_kernel<T, DST_DTYPE,
// IS_COLUMN_MAJOR, SCALE_UE8M0> with GroupReduceMax and vectorize_with_alignment
// (csrc/quantization/vectorization_utils.cuh); the kernel was taken by vLLM from sgl-project/sglang
// sgl-kernel/csrc/gemm/per_token_group_quant_8bit.cu. Apache-2.0 licence. Written for LARK's
// corpus from that kernel's structure (16 lanes per group, groups_per_block groups per block, each
// group staged in dynamic shared memory while its absmax is taken, an alignment-aware copy: a fast
// path when the pointer is 16-byte aligned and the length a multiple of the pack, else a scalar
// prefix up to the next 16-byte boundary, packs, and a scalar tail; a half-warp butterfly max with
// the member mask 0x0000ffff / 0xffff0000 by half-warp, lane 0 stores the scale, a block barrier,
// then the quantised write from shared memory); not a copy of its text. Instantiated for bf16 input
// and int8 output with row-major scales (fp8 has no type here).
// Host launch in vLLM: groups_per_block = 16 when num_groups % 16 == 0, grid num_groups /
// groups_per_block, block 16 * groups_per_block, dynamic shared groups_per_block * group_size * 2.
#include "real_prelude.h"

namespace vllm {

template <typename T, int N>
struct alignas(sizeof(T) * N) pack_t {
  T val[N];
};

template <int VEC, typename InT, typename OutT, typename ScaOp>
__device__ __forceinline__ void copy_aligned(const InT* in, OutT* out, int len, int tid, int stride, ScaOp&& op) {
  constexpr int WIDTH = VEC * sizeof(InT);
  uintptr_t addr = reinterpret_cast<uintptr_t>(in);
  bool can_vec = ((addr & (WIDTH - 1)) == 0) && ((len & (VEC - 1)) == 0);
  using vin_t = pack_t<InT, VEC>;
  using vout_t = pack_t<OutT, VEC>;
  if (can_vec) {
    int num_vec = len / VEC;
    auto* vin = reinterpret_cast<const vin_t*>(in);
    auto* vout = reinterpret_cast<vout_t*>(out);
    for (int i = tid; i < num_vec; i += stride) {
      vout_t o;
      vin_t s = vin[i];
#pragma unroll
      for (int k = 0; k < VEC; ++k) op(o.val[k], s.val[k]);
      vout[i] = o;
    }
    return;
  }
  int misalign = addr & (WIDTH - 1);
  int to_boundary = WIDTH - misalign;
  int prefix = to_boundary & (WIDTH - 1);
  prefix /= sizeof(InT);
  prefix = min(prefix, len);
  for (int i = tid; i < prefix; i += stride) op(out[i], in[i]);
  in += prefix;
  out += prefix;
  len -= prefix;
  int num_vec = len / VEC;
  auto* vin = reinterpret_cast<const vin_t*>(in);
  auto* vout = reinterpret_cast<vout_t*>(out);
  for (int i = tid; i < num_vec; i += stride) {
    vout_t o;
    vin_t s = vin[i];
#pragma unroll
    for (int k = 0; k < VEC; ++k) op(o.val[k], s.val[k]);
    vout[i] = o;
  }
  int tail = num_vec * VEC;
  for (int i = tid + tail; i < len; i += stride) op(out[i], in[i]);
}

__device__ __forceinline__ float half_warp_max(float v) {
  unsigned mask = threadIdx.x % 32 >= 16 ? 0xffff0000u : 0x0000ffffu;
  v = fmaxf(v, __shfl_xor_sync(mask, v, 8));
  v = fmaxf(v, __shfl_xor_sync(mask, v, 4));
  v = fmaxf(v, __shfl_xor_sync(mask, v, 2));
  v = fmaxf(v, __shfl_xor_sync(mask, v, 1));
  return v;
}

template <typename T, typename DST_T>
__global__ void per_token_group_quant_8bit_kernel(const T* __restrict__ input, void* __restrict__ output_q,
                                                  float* __restrict__ output_s, const int group_size, const int num_groups,
                                                  const int groups_per_block, const float eps, const float min_8bit,
                                                  const float max_8bit) {
  const int lanes_per_group = 16;
  const int64_t group_in_block = threadIdx.x / lanes_per_group;
  const int lane = threadIdx.x % lanes_per_group;
  const int64_t first_group = blockIdx.x * groups_per_block;
  const int64_t group = first_group + group_in_block;
  const int64_t group_offset = group * group_size;

  float absmax = eps;
  const T* g_in = input + group_offset;
  DST_T* g_out = static_cast<DST_T*>(output_q) + group_offset;
  float* scale_out = output_s + group;

  extern __shared__ __attribute__((aligned(16))) char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  T* g_smem = smem + group_in_block * group_size;

  constexpr int VEC = 16 / sizeof(T);
  copy_aligned<VEC>(g_in, g_smem, group_size, lane, lanes_per_group, [&](T& dst, const T& src) {
    absmax = fmaxf(absmax, fabsf(static_cast<float>(src)));
    dst = src;
  });

  absmax = half_warp_max(absmax);
  float y_s = absmax / max_8bit;
  if (lane == 0) *scale_out = y_s;
  __syncthreads();

  copy_aligned<VEC>(g_smem, g_out, group_size, lane, lanes_per_group, [&](DST_T& dst, const T& src) {
    float q = fminf(fmaxf(static_cast<float>(src) / y_s, min_8bit), max_8bit);
    dst = DST_T(q);
  });
}

template __global__ void per_token_group_quant_8bit_kernel<__nv_bfloat16, int8_t>(const __nv_bfloat16*, void*, float*, const int,
                                                                                  const int, const int, const float, const float,
                                                                                  const float);
}  // namespace vllm
