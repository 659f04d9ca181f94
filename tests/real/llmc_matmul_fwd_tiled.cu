// Modelled on karpathy/llm.c dev/cuda/matmul_forward.cu, matmul_forward_kernel4, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (a 16x16 block computes a 128x128 output tile, 8x8 per thread in registers,
// bias epilogue folded into the accumulator start, 32-wide K slices of both operands staged in
// shared memory with 128-bit accesses, a barrier before and after each staging step); not a copy
// of its text. out is (B*T, OC), inp (B*T, C), weight (OC, C).
// Host launch in llm.c: block (16, 16), grid (ceil(B*T / 128), ceil(OC / 128)).
#include "real_prelude.h"

extern "C" __global__ void __launch_bounds__(256) llmc_matmul_fwd_tiled(float* out, const float* inp, const float* weight,
                                                                         const float* bias, int C, int OC) {
  __shared__ float a_s[128][32];
  __shared__ float w_s[128][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int oc = 8 * (blockIdx.y * blockDim.y + ty);
  const float* a = inp + 128 * blockIdx.x * C;
  const float* w = weight + 128 * blockIdx.y * C;
  float* o = out + 128 * blockIdx.x * OC + 128 * blockIdx.y;

  float acc[8][8] = {};
  if (bias != nullptr) {
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 8; j += 4) {
        float4 b4 = *reinterpret_cast<const float4*>(bias + oc + j);
        acc[i][j] = b4.x;
        acc[i][j + 1] = b4.y;
        acc[i][j + 2] = b4.z;
        acc[i][j + 3] = b4.w;
      }
  }

  const int k_first = 4 * (16 * ty + tx);
  for (int k0 = 0; k0 < C; k0 += 32) {
    __syncthreads();  // the previous slice has been consumed
    const int col = 4 * (tx % 8);
    for (int r = 2 * ty + tx / 8; r < 128; r += 32) {
      *reinterpret_cast<float4*>(&a_s[r][col]) = *reinterpret_cast<const float4*>(a + r * C + k0 + col);
      *reinterpret_cast<float4*>(&w_s[r][col]) = *reinterpret_cast<const float4*>(w + r * C + k0 + col);
    }
    __syncthreads();
    for (int k = k_first; k < k_first + 32; k += 4) {
      float4 wv[8];
      for (int u = 0; u < 8; ++u) wv[u] = *reinterpret_cast<const float4*>(&w_s[u + 8 * ty][k % 32]);
      for (int i = 0; i < 8; ++i) {
        float4 av = *reinterpret_cast<const float4*>(&a_s[i + 8 * tx][k % 32]);
        for (int j = 0; j < 8; ++j) acc[i][j] += av.x * wv[j].x + av.y * wv[j].y + av.z * wv[j].z + av.w * wv[j].w;
      }
    }
  }
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; j += 4)
      *reinterpret_cast<float4*>(o + (8 * tx + i) * OC + 8 * ty + j) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}
