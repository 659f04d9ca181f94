// Templated in-place scaling x[i] *= alpha, explicitly instantiated for float.
template <typename T>
__global__ void scale_inplace(T* x, T alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= alpha;
}

template __global__ void scale_inplace<float>(float*, float, int);
