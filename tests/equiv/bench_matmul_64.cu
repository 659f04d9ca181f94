// Benchmark: 64x64x64 SGEMM C = A * B (row-major), 16x16 shared-memory tiles, a 4x4 grid of 16x16 blocks.
#define TILE 16

extern "C" __global__ void bench_matmul_64(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * K + t * TILE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * N + col] = acc;
}
