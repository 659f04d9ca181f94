// Copies n floats: whole float4 vectors through the read-only path (ld.global.nc.v4.f32, as
// __ldg(const float4*) lowers), then the n % 4 floats of the tail one per thread.
// float4 is CUDA's own (16-byte aligned), declared by the runtime header nvcc includes.
static __device__ __forceinline__ float4 ldg4(const float4* p) {
  float4 v;
  asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

extern "C" __global__ void float4_copy_nc(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int vectors = n / 4;
  if (i < vectors) reinterpret_cast<float4*>(out)[i] = ldg4(reinterpret_cast<const float4*>(x) + i);
  int tail = vectors * 4 + i;
  if (i < n % 4) out[tail] = x[tail];
}
