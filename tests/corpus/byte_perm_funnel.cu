// Byte-swaps each 32-bit word (__byte_perm with selector 0x0123), rotates it left by i & 31 (a
// funnel shift of the word with itself, as __funnelshift_l(w, w, i) lowers) and mixes in a
// 12-bit field of the swapped word (clang writes bfe for the shift-and-mask).
static __device__ __forceinline__ unsigned byte_perm(unsigned a, unsigned b, unsigned s) { return __nvvm_prmt(a, b, s); }
static __device__ __forceinline__ unsigned funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  unsigned r;
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
  return r;
}

extern "C" __global__ void byte_perm_funnel(const unsigned* in, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned w = byte_perm(in[i], 0, 0x0123);
    unsigned field = (w >> 4) & 0xfff;
    out[i] = funnelshift_l(w, w, i & 31) ^ field;
  }
}
