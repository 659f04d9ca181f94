// 4-bit weight dequantization to fp16: each byte packs two weights (low nibble first), zero point 8.
typedef _Float16 half;

extern "C" __global__ void dequant_int4_f16(const unsigned char* packed, const half* scales, half* w, int n_bytes,
                                            int group_size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_bytes) return;
  unsigned char b = packed[i];
  float s = (float)scales[(2 * i) / group_size];
  w[2 * i] = (half)((float)((int)(b & 0xF) - 8) * s);
  w[2 * i + 1] = (half)((float)((int)(b >> 4) - 8) * s);
}
