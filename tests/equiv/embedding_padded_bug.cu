// Embedding gather from a table whose rows are padded to row_stride floats (row_stride >= dim):
// out[t, :] = table[ids[t], 0:dim], one block per token.
extern "C" __global__ void embedding_padded_bug(float* out, const int* ids, const float* table, int tokens, int dim,
                                                int row_stride) {
  int t = blockIdx.x;
  if (t >= tokens) return;
  int id = ids[t];
  for (int d = threadIdx.x; d < dim; d += blockDim.x) out[(size_t)t * dim + d] = table[(size_t)id * dim + d];
}
