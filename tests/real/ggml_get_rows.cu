// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/getrows.cu, k_get_rows_float<src0_t, dst_t>,
// commit 009626c9f8effd13a17085e1a45c27e90d0491be, MIT licence. Written for LARK's corpus from that
// kernel's structure (grid x = destination row, grid y = column block, grid z = the outer batch
// dims; the source row number is read from the int32 index tensor src1 and used in a byte-strided
// address; columns past ne00 leave); not a copy of its text. Instantiated for <half, float>.
// Host launch in llama.cpp: block 256, grid (ne10, ceil(ne00 / 256), ne11 * ne12).
#include "ggml_common.h"

template <typename src0_t, typename dst_t>
static __global__ void k_get_rows_float(const src0_t* __restrict__ src0, const int32_t* __restrict__ src1, dst_t* __restrict__ dst,
                                        const long long ne00, const long long ne12, const unsigned long s1, const unsigned long s2,
                                        const unsigned long s3, const unsigned long nb01, const unsigned long nb02,
                                        const unsigned long nb03, const unsigned long s10, const unsigned long s11,
                                        const unsigned long s12) {
  const int i00 = blockIdx.y * blockDim.x + threadIdx.x;
  const int i10 = blockIdx.x;
  const int i11 = blockIdx.z / ne12;
  const int i12 = blockIdx.z % ne12;
  if (i00 >= ne00) return;
  const int i01 = src1[i10 * s10 + i11 * s11 + i12 * s12];
  dst_t* dst_row = dst + i10 * s1 + i11 * s2 + i12 * s3;
  const src0_t* src0_row = (const src0_t*)((const char*)src0 + i01 * nb01 + i11 * nb02 + i12 * nb03);
  dst_row[i00] = (dst_t)src0_row[i00];
}

template __global__ void k_get_rows_float<half, float>(const half*, const int32_t*, float*, const long long, const long long,
                                                       const unsigned long, const unsigned long, const unsigned long,
                                                       const unsigned long, const unsigned long, const unsigned long,
                                                       const unsigned long, const unsigned long, const unsigned long);
