// ReLU6 with the bounds in the other order, and the wrong lower bound: max(min(x, 6), -6)
// lets negative values through where the reference clamps them to 0.
extern "C" __global__ void relu6_swapped_bug(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = fmaxf(fminf(x[i], 6.0f), -6.0f);
  }
}
