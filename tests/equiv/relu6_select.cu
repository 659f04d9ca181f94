// ReLU6 with the bounds as conditional expressions, the form an LLM often writes:
// clang selects between the input and a float literal (`selp.f32 %f, 0f40C00000, %f`), whose
// operand arrives as bits; the check must still read it as the float 6.
extern "C" __global__ void relu6_select(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    v = v < 0.0f ? 0.0f : v;
    y[i] = v > 6.0f ? 6.0f : v;
  }
}
