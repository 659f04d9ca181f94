// Modelled on pytorch/pytorch aten/src/ATen/native/cuda/SoftMax.cu, cunn_SoftMaxForward<ILP,
// scalar_t, accscalar_t, outscalar_t, Epilogue> with ilpReduce, blockReduce,
// WriteFpropResultsVectorized, WriteFpropResults and SoftMaxForwardEpilogue, commit
// e9865f53f2566a471b5130d31034807e14755851 (the version with blockReduce's per-warp loop and
// __syncwarp(mask)), BSD-3-Clause licence. Written for LARK's corpus from that kernel's structure
// (one block per row, the row's misalignment `shift` from the pointer value modulo 16 bytes, one
// scalar step for the misaligned head, ILP-wide aligned vector loads over the body, a scalar tail,
// a block reduction through dynamic shared memory of blockDim.x accumulators, vectorised or scalar
// writes depending on whether input and output share the shift); not a copy of its text.
// at::native::memory::aligned_vector is a 16-byte aligned struct here. Instantiated for float,
// ILP = 16 / 4 = 4; namespace at stands for the original's at::native.
// Host launch in PyTorch: grid = rows, block = SoftMaxForward_getBlockSize(classes) = 1024 for
// classes >= 1024, dynamic shared memory block.x * sizeof(float).
#include "real_prelude.h"

#define ALIGN_BYTES 16

namespace at {

template <typename T, int N>
struct alignas(sizeof(T) * N) aligned_vec {
  T val[N];
};

template <typename T>
struct MaxOp {
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};
template <typename T>
struct AddOp {
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <typename T, typename A>
struct MaxFloatOp {
  __device__ __forceinline__ A operator()(A m, T v) const { return fmaxf(m, (A)v); }
};
template <typename T, typename A>
struct SumExpOp {
  __device__ __forceinline__ SumExpOp(A m) : max_k(m) {}
  __device__ __forceinline__ A operator()(A s, T v) const { return s + expf(v - max_k); }
  const A max_k;
};
template <typename T, typename A, typename O>
struct SoftMaxEpilogue {
  __device__ __forceinline__ SoftMaxEpilogue(A max_input, A sum) : max_input(max_input), sum(sum) {}
  __device__ __forceinline__ O operator()(T input) const { return static_cast<O>(expf(input - max_input) / sum); }
  const A max_input;
  const A sum;
};

template <template <typename> class R, typename A>
__device__ __forceinline__ A block_reduce(A* smem, A val, const R<A>& r, A init) {
  // a barrier first, so that chained reductions do not overwrite slots still being read
  __syncthreads();
  smem[threadIdx.x] = val;
  __syncthreads();
  A warp_val = init;
  unsigned mask = (unsigned)((((uint64_t)1) << (blockDim.x / 32)) - 1);
  if (threadIdx.x < 32) {
    int lane = threadIdx.x % 32;
    if (lane < blockDim.x / 32) {
#pragma unroll
      for (int i = 0; i < 32; ++i) warp_val = r(warp_val, smem[lane * 32 + i]);
      __syncwarp(mask);
      smem[lane] = warp_val;
    }
  }
  __syncthreads();
  A block_val = init;
  if (threadIdx.x == 0) {
    for (int i = 0; i < blockDim.x / 32; ++i) block_val = r(block_val, smem[i]);
    smem[0] = block_val;
  }
  __syncthreads();
  return smem[0];
}

template <template <typename, typename> class R, int ILP, typename T, typename A>
__device__ __forceinline__ A ilp_reduce(int shift, const T* data, int size, const R<T, A>& r, A init) {
  using LoadT = aligned_vec<T, ILP>;
  A v_acc = init;
  int offset = threadIdx.x;
  if (shift > 0) {
    data -= shift;
    size += shift;
    if (threadIdx.x >= shift) v_acc = r(v_acc, data[offset]);
    size -= blockDim.x;
    data += blockDim.x;
  }
  int last = size % (ILP * blockDim.x);
  T v[ILP];
  LoadT* vp = reinterpret_cast<LoadT*>(&v);
  for (; offset * ILP < (size - last); offset += blockDim.x) {
    *vp = reinterpret_cast<const LoadT*>(data)[offset];
#pragma unroll
    for (int j = 0; j < ILP; ++j) v_acc = r(v_acc, v[j]);
  }
  offset = size - last + threadIdx.x;
  for (; offset < size; offset += blockDim.x) v_acc = r(v_acc, data[offset]);
  return v_acc;
}

template <int ILP, typename T, typename A, typename O, template <typename, typename, typename> class E>
__device__ __forceinline__ void write_results_vectorized(int size, const int shift, const T* input, O* output, E<T, A, O> epi) {
  using LoadT = aligned_vec<T, ILP>;
  using StoreT = aligned_vec<O, ILP>;
  int offset = threadIdx.x;
  if (shift > 0) {
    input -= shift;
    output -= shift;
    size += shift;
    if (threadIdx.x >= shift) output[offset] = epi(input[offset]);
    size -= blockDim.x;
    input += blockDim.x;
    output += blockDim.x;
  }
  const int last = size % (ILP * blockDim.x);
  T in_v[ILP];
  LoadT* in_p = reinterpret_cast<LoadT*>(&in_v);
  O out_v[ILP];
  const StoreT* out_p = reinterpret_cast<const StoreT*>(&out_v);
  for (; offset * ILP < (size - last); offset += blockDim.x) {
    *in_p = reinterpret_cast<const LoadT*>(input)[offset];
#pragma unroll
    for (int j = 0; j < ILP; ++j) out_v[j] = epi(in_v[j]);
    reinterpret_cast<StoreT*>(output)[offset] = *out_p;
  }
  offset = size - last + threadIdx.x;
  for (; offset < size; offset += blockDim.x) output[offset] = epi(input[offset]);
}

template <int ILP, typename T, typename A, typename O, template <typename, typename, typename> class E>
__device__ __forceinline__ void write_results(int classes, const T* input, O* output, E<T, A, O> epi) {
  int offset = threadIdx.x;
  int last = classes % (ILP * blockDim.x);
  for (; offset < classes - last; offset += blockDim.x * ILP) {
    T tmp[ILP];
#pragma unroll
    for (int j = 0; j < ILP; ++j) tmp[j] = input[offset + j * blockDim.x];
#pragma unroll
    for (int j = 0; j < ILP; ++j) output[offset + j * blockDim.x] = epi(tmp[j]);
  }
  for (; offset < classes; offset += blockDim.x) output[offset] = epi(input[offset]);
}

template <int ILP, typename T, typename A, typename O, template <typename, typename, typename> class E>
__global__ void cunn_SoftMaxForward(O* output, const T* input, int classes) {
  extern __shared__ unsigned char smem[];
  auto sdata = reinterpret_cast<A*>(smem);
  input += static_cast<int64_t>(blockIdx.x) * classes;
  output += static_cast<int64_t>(blockIdx.x) * classes;
  const int shift = ((uint64_t)input) % ALIGN_BYTES / sizeof(T);
  const int output_shift = ((uint64_t)output) % ALIGN_BYTES / sizeof(O);

  A thread_max = ilp_reduce<MaxFloatOp, ILP, T, A>(shift, input, classes, MaxFloatOp<T, A>(), -FLT_MAX);
  A max_k = block_reduce<MaxOp, A>(sdata, thread_max, MaxOp<A>(), -FLT_MAX);
  A thread_exp = ilp_reduce<SumExpOp, ILP, T, A>(shift, input, classes, SumExpOp<T, A>(max_k), static_cast<A>(0));
  A sum_all = block_reduce<AddOp, A>(sdata, thread_exp, AddOp<A>(), static_cast<A>(0));
  E<T, A, O> epi(max_k, sum_all);
  if (shift == output_shift)
    write_results_vectorized<ILP, T, A, O, E>(classes, shift, input, output, epi);
  else
    write_results<ILP, T, A, O, E>(classes, input, output, epi);
}

template __global__ void cunn_SoftMaxForward<4, float, float, float, SoftMaxEpilogue>(float*, const float*, int);
}  // namespace at
