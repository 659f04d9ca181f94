// Modelled on karpathy/llm.c llmc/encoder.cuh, encoder_forward_kernel3, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (token embedding gathered through the token ids `inp`, plus the position
// embedding, in 128-bit packs); not a copy of its text. floatX is float (packs of 4).
// The gather reads wte at a row chosen by a loaded token id: reads only, so no race depends on it,
// but its bounds do (ids < V). Host launch in llm.c: block 256, grid ceil(B * T * C / (256 * 4)).
#include "real_prelude.h"

extern "C" __global__ void llmc_encoder_fwd(float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i >= B * T * C) return;
  int bt = i / C;
  int b = bt / T, t = bt % T, c = i % C;
  int token = inp[b * T + t];
  float4 e = __ldcs(reinterpret_cast<const float4*>(wte + token * C + c));
  float4 p = __ldcs(reinterpret_cast<const float4*>(wpe + t * C + c));
  *reinterpret_cast<float4*>(out + b * T * C + t * C + c) = make_float4(e.x + p.x, e.y + p.y, e.z + p.z, e.w + p.w);
}
