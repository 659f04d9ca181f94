// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/quantize.cu, quantize_q8_1, commit
// 000f4625abc4efd46ee160e4473ffe0da004082e, MIT licence. Written for LARK's corpus from that
// kernel's structure (one value per thread on a (x, rows, channels*samples) grid, a 32-lane group
// per q8_1 block reduces |x| max and the sum with width-32 shuffles, every lane writes its int8
// quant, lane 0 of the group writes the (d, sum) half2 after the other lanes left); not a copy of
// its text. The fastdiv of the original is a plain division here (fastdiv needs __umulhi tables).
// Host launch in llama.cpp: block 256, grid (ceil(ne0 / 256), ne1, ne2 * ne3).
#include "ggml_common.h"

#define QK8_1 32

struct block_q8_1 {
  __half2 ds;
  int8_t qs[QK8_1];
};

static __global__ void __launch_bounds__(256, 1)
    quantize_q8_1(const float* __restrict__ x, void* __restrict__ vy, const long long ne00, const long long s01, const long long s02,
                  const long long s03, const long long ne0, const unsigned ne1, const unsigned ne2) {
  const long long i0 = (long long)blockDim.x * blockIdx.x + threadIdx.x;
  if (i0 >= ne0) return;
  const long long i3 = blockIdx.z / ne2;
  const long long i2 = blockIdx.z - i3 * ne2;
  const long long i1 = blockIdx.y;
  const long long i_cont = ((i3 * ne2 + i2) * ne1 + i1) * ne0 + i0;
  block_q8_1* y = (block_q8_1*)vy;
  const long long ib = i_cont / QK8_1;
  const long long iqs = i_cont % QK8_1;

  const float xi = i0 < ne00 ? x[i3 * s03 + i2 * s02 + i1 * s01 + i0] : 0.0f;
  float amax = fabsf(xi);
  float sum = xi;
  amax = warp_reduce_max<QK8_1>(amax);
  sum = warp_reduce_sum<QK8_1>(sum);
  const float d = amax / 127.0f;
  const int8_t q = amax == 0.0f ? 0 : roundf(xi / d);
  y[ib].qs[iqs] = q;
  if (iqs > 0) return;
  y[ib].ds = __half2{(__half)d, (__half)sum};
}
