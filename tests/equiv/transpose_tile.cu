// out (cols x rows) = transpose of in (rows x cols) through a padded 32x32 shared tile, 32x8 threads
// per block; rows and cols are multiples of 32.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_tile(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;  // a column of in
  int y = blockIdx.y * TILE + threadIdx.y;  // a row of in
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // a column of out
  y = blockIdx.x * TILE + threadIdx.y;  // a row of out
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
