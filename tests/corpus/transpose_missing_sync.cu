// Tiled transpose through padded shared memory; width and height are multiples of 32.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_missing_sync(float* out, const float* in, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];

  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
