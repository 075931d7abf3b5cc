// Inclusive prefix sum in two levels: each block scans its part in dynamic shared memory
// (Hillis-Steele) and, when asked, writes its total; the totals are scanned by the same kernel
// (no totals wanted: block_sums is NULL) and added back. Style of the samples' scan.
static __global__ void scan_block(const float *in, float *out, float *block_sums = NULL, int n = 0) {
  extern __shared__ float temp[];
  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  temp[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    float v = tid >= offset ? temp[tid - offset] : 0.0f;
    __syncthreads();
    temp[tid] += v;
    __syncthreads();
  }
  if (i < n) out[i] = temp[tid];
  if (block_sums && tid == blockDim.x - 1) block_sums[blockIdx.x] = temp[tid];
}

__global__ void add_block_offsets(float *out, const float *scanned_sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}
