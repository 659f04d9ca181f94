// Token embedding gather: out[t, :] = table[ids[t], :], one block per token.
extern "C" __global__ void embedding_lookup(const int* ids, const float* table, float* out, int dim) {
  int t = blockIdx.x;
  int id = ids[t];
  for (int d = threadIdx.x; d < dim; d += blockDim.x)
    out[(size_t)t * dim + d] = table[(size_t)id * dim + d];
}
