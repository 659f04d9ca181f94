// Copies n floats as float4 vectors, rounding the vector count up: when n is not a multiple of
// 4 the last vector reads and writes past the end of both buffers.
// float4 is CUDA's own (16-byte aligned), declared by the runtime header nvcc includes.
static __device__ __forceinline__ float4 ldg4(const float4* p) {
  float4 v;
  asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

extern "C" __global__ void float4_copy_tail_oob(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (n + 3) / 4) reinterpret_cast<float4*>(out)[i] = ldg4(reinterpret_cast<const float4*>(x) + i);
}
