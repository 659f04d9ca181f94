// Modelled on flashinfer-ai/flashinfer include/flashinfer/page.cuh,
// AppendPagedKVCacheKernel<head_dim, vec_size, DType, IdType> with paged_kv_t<DType, IdType>
// (get_k_ptr, get_v_ptr, get_elem_offset) and vec_t<DType, vec_size>::memcpy, commit
// 8f9ad2000db7fa9970b397086296b0c6e6461b02, Apache-2.0 licence. Written for LARK's corpus from that
// kernel's structure (the paged cache passed by value as a struct holding its sizes, strides and
// device pointers; a grid-strided loop over the nnz appended tokens; the token's page slot from
// indptr[batch_indices[i]] * page_size + positions[i] split by page_size; the page number through
// indices[] with __ldg; (head_dim / vec_size) x num_heads threads copying 16-byte packs of key and
// value); not a copy of its text. uint_fastdiv's multiply-high division is a plain division here.
// Instantiated for half, head_dim 128, int32 ids.
// Host launch in flashinfer: block (head_dim / vec_size, num_heads) = (16, num_kv_heads),
// grid num_blocks_per_sm * num_sms with num_blocks_per_sm = min(occupancy, ceil(nnz / num_sms)).
#include "real_prelude.h"

typedef unsigned long size_t;

namespace flashinfer {

struct uint_div {
  uint32_t d;
  __device__ __forceinline__ void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = n / d;
    r = n - q * d;
  }
};
__device__ __forceinline__ uint32_t operator*(uint32_t a, const uint_div& b) { return a * b.d; }

template <typename DType, typename IdType>
struct paged_kv_t {
  uint_div page_size;
  uint32_t num_heads;
  uint32_t head_dim;
  uint32_t batch_size;
  uint32_t stride_page;
  uint32_t stride_n;
  uint32_t stride_h;
  DType* k_data;
  DType* v_data;
  IdType* indices;
  IdType* indptr;
  IdType* last_page_len;

  __device__ __forceinline__ size_t elem_offset(size_t page, size_t head, size_t entry, size_t feat) const {
    return page * stride_page + head * stride_h + entry * stride_n + feat;
  }
  __device__ __forceinline__ DType* k_ptr(IdType page_iter, uint32_t head, uint32_t entry, uint32_t feat) const {
    return k_data + elem_offset(__ldg(indices + page_iter), head, entry, feat);
  }
  __device__ __forceinline__ DType* v_ptr(IdType page_iter, uint32_t head, uint32_t entry, uint32_t feat) const {
    return v_data + elem_offset(__ldg(indices + page_iter), head, entry, feat);
  }
};

template <typename T, uint32_t N>
struct vec_copy {
  static __device__ __forceinline__ void memcpy(T* dst, const T* src) {
    static_assert(sizeof(T) * N == 16, "16-byte packs");
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
  }
};

template <uint32_t head_dim, uint32_t vec_size, typename DType, typename IdType>
__global__ void AppendPagedKVCacheKernel(paged_kv_t<DType, IdType> paged_kv, DType* __restrict__ append_key,
                                         DType* __restrict__ append_value, IdType* __restrict__ batch_indices,
                                         IdType* __restrict__ positions, uint32_t nnz, size_t append_k_stride_n,
                                         size_t append_k_stride_h, size_t append_v_stride_n, size_t append_v_stride_h) {
  uint32_t tx = threadIdx.x, ty = threadIdx.y;
  uint32_t head = ty;
  for (uint32_t i = blockIdx.x; i < nnz; i += gridDim.x) {
    uint32_t page_iter, entry;
    paged_kv.page_size.divmod(paged_kv.indptr[batch_indices[i]] * paged_kv.page_size + positions[i], page_iter, entry);
    DType* kp = paged_kv.k_ptr(page_iter, head, entry, tx * vec_size);
    DType* vp = paged_kv.v_ptr(page_iter, head, entry, tx * vec_size);
    vec_copy<DType, vec_size>::memcpy(kp, append_key + i * append_k_stride_n + head * append_k_stride_h + tx * vec_size);
    vec_copy<DType, vec_size>::memcpy(vp, append_value + i * append_v_stride_n + head * append_v_stride_h + tx * vec_size);
  }
}

template __global__ void AppendPagedKVCacheKernel<128, 8, half, int32_t>(paged_kv_t<half, int32_t>, half*, half*, int32_t*,
                                                                         int32_t*, uint32_t, size_t, size_t, size_t, size_t);
}  // namespace flashinfer
