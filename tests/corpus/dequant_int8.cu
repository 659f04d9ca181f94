// Per-group symmetric int8 dequantization: w[i] = q[i] * scales[i / group_size].
extern "C" __global__ void dequant_int8(const signed char* q, const float* scales, float* w, int n, int group_size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = (float)q[i] * scales[i / group_size];
}
