// Token embedding on the device: the forward gather and the backward scatter-add (device_ops.hpp).
//
// The backward pass adds each row's gradient into its token's row of dtable, and a token may repeat. The host
// adds rows in order, one column at a time (ops::embedding_backward); here every (token, column) sum is still
// one chain in one thread, in row order, so the result has the host's bits and needs no atomics. For
// parallelism the tokens are split into kBuckets classes (token mod kBuckets): the blocks of class b scan all
// rows and add only those whose token is in b, one thread per column.
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "grid.cuh"

namespace llmtrain::model::cuda {
namespace {

constexpr unsigned kBuckets = 32;
constexpr int kColumns = 128;  // threads (columns) per block of the backward pass

__global__ void gather_rows(float* out, const float* table, const std::int32_t* tokens, Index rows, Index dim) {
  for_each_element(rows, dim, [=](Index r, Index j) { out[r * dim + j] = table[Index(tokens[r]) * dim + j]; });
}

// Block (x, y): columns x * kColumns + threadIdx.x, tokens of bucket y; the rows' tokens pass through shared
// memory kColumns at a time.
__global__ void scatter_add_rows(float* dtable, const float* dout, const std::int32_t* tokens, Index rows, Index dim) {
  __shared__ std::int32_t chunk[kColumns];
  const Index j = Index(blockIdx.x) * kColumns + threadIdx.x;
  for (Index r0 = 0; r0 < rows; r0 += kColumns) {
    const Index n = rows - r0 < kColumns ? rows - r0 : kColumns;
    if (threadIdx.x < n) chunk[threadIdx.x] = tokens[r0 + threadIdx.x];
    __syncthreads();
    if (j < dim)
      for (Index k = 0; k < n; ++k) {
        const std::int32_t token = chunk[k];
        if (unsigned(token) % kBuckets == blockIdx.y) dtable[Index(token) * dim + j] += dout[(r0 + k) * dim + j];
      }
    __syncthreads();
  }
}

}  // namespace

void embedding_forward(float* out, const float* table, const std::int32_t* tokens, Index rows, Index dim,
                       cudaStream_t stream) {
  if (rows * dim == 0) return;
  gather_rows<<<matrix_blocks(rows, dim), kThreads, 0, stream>>>(out, table, tokens, rows, dim);
  check_launch("embedding_forward (gather_rows)");
}

void embedding_backward(float* dtable, const float* dout, const std::int32_t* tokens, Index rows, Index dim,
                        cudaStream_t stream) {
  if (rows * dim == 0) return;
  const dim3 grid(unsigned((dim + kColumns - 1) / kColumns), kBuckets);
  scatter_add_rows<<<grid, kColumns, 0, stream>>>(dtable, dout, tokens, rows, dim);
  check_launch("embedding_backward (scatter_add_rows)");
}

}  // namespace llmtrain::model::cuda
