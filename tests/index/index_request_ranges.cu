// Index-buffer kernel for LARK's corpus: per-request output ranges from per-request counters
// (offsets = exclusive prefix sum of counts, as a batch's query_start_loc / cu_seqlens), written
// for this corpus: one block per request copies its counts[req] rows to out starting at
// offsets[req]. Race-free when the ranges [offsets[r], offsets[r] + counts[r]) do not overlap.
#include "../real/real_prelude.h"

extern "C" __global__ void index_request_ranges(const float* __restrict__ src, float* __restrict__ out, const int* __restrict__ offsets,
                                                const int* __restrict__ counts, const int src_rows_per_req, const int width) {
  const int req = blockIdx.x;
  const int first = offsets[req];
  const int rows = counts[req];
  for (int r = 0; r < rows; ++r)
    for (int i = threadIdx.x; i < width; i += blockDim.x) out[(first + r) * width + i] = src[(req * src_rows_per_req + r) * width + i];
}
