// Matrix transpose through a shared-memory tile padded by one column (no bank conflicts), in
// the style of the samples' transpose (transposeCoalesced / transposeNoBankConflicts).
// Launch with grid (ceil(width/TILE_DIM), ceil(height/TILE_DIM)), block (TILE_DIM, BLOCK_ROWS).
template <typename T, int TILE_DIM, int BLOCK_ROWS>
__global__ void transposeNoBankConflicts(T *odata, const T *idata, int width, int height) {
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < height && y + j < width) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
