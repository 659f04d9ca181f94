// RMSNorm that multiplies by the weight before normalising: correct (the scale commutes).
extern "C" __global__ void rmsnorm_weight_first(float* out, const float* x, const float* w, int rows, int cols, float eps) {
  __shared__ float red[128];
  int row = blockIdx.x, tid = threadIdx.x;
  float s = 0.f;
  for (int c = tid; c < cols; c += 128) { float v = x[row * cols + c]; s += v * v; }
  red[tid] = s; __syncthreads();
  for (int k = 64; k > 0; k >>= 1) { if (tid < k) red[tid] += red[tid + k]; __syncthreads(); }
  float inv = rsqrtf(red[0] / cols + eps);
  for (int c = tid; c < cols; c += 128) out[row * cols + c] = (x[row * cols + c] * w[c]) * inv;
}
