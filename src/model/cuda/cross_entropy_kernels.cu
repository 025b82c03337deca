// Cross-entropy on the device (device_ops.hpp): the loss and logit gradient of each row, and the chunk's loss
// sum and token count.
//
// One block per row (a row is the vocabulary, 50k+ logits): the row maximum and the sum of exponentials are
// each a strided share per thread folded by block_reduce in a fixed tree; the element arithmetic (fast::exp,
// cross_entropy_loss) is row_kernels.inc's. Passes as on the host: maximum, exponentials written in place and
// summed, then (with want_grad) the exponentials scaled into the gradient. loss_sum is one block over all
// rows, in double. Fixed orders throughout: a run repeats bitwise; it differs from the host in rounding only.
#include <cmath>
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "llmtrain/core/cuda/block_reduce.cuh"
#include "row_math.cuh"

namespace llmtrain::model::cuda {
namespace {

using llmtrain::cuda::block_reduce;
using llmtrain::cuda::Max;
using llmtrain::cuda::Sum;

constexpr int kRowThreads = 512;
constexpr int kSumThreads = 1024;

__global__ void cross_entropy_row_blocks(float* logits, float* loss, const std::int32_t* targets, Index vocab,
                                         std::int32_t ignore_index, float grad_scale, bool want_grad) {
  float* z = logits + Index(blockIdx.x) * vocab;
  const std::int32_t target = targets[blockIdx.x];
  if (target == ignore_index) {  // the whole block takes this branch
    if (want_grad)
      for (Index j = threadIdx.x; j < vocab; j += blockDim.x) z[j] = 0;
    if (threadIdx.x == 0) loss[blockIdx.x] = 0;
    return;
  }
  const float target_logit = z[target];  // read by every thread before the first write (after a block_reduce)
  float max = -INFINITY;
  for (Index j = threadIdx.x; j < vocab; j += blockDim.x) max = Max{}(max, z[j]);
  max = block_reduce(max, Max{}, -INFINITY);
  float sum = 0;
  for (Index j = threadIdx.x; j < vocab; j += blockDim.x) {
    z[j] = fast::exp(z[j] - max);
    sum += z[j];
  }
  sum = block_reduce(sum, Sum{}, 0.0f);
  if (threadIdx.x == 0) loss[blockIdx.x] = cross_entropy_loss(sum, max, target_logit);
  if (!want_grad) return;
  const float scale = grad_scale / sum;
  for (Index j = threadIdx.x; j < vocab; j += blockDim.x) {
    z[j] *= scale;
    if (j == target) z[j] -= grad_scale;
  }
}

// One block: thread t takes elements t, t + kSumThreads, ... in order, then block_reduce folds the threads.
__global__ void loss_sum_block(double* sum, std::int64_t* count, const float* loss, const std::int32_t* targets,
                               Index n, std::int32_t ignore_index) {
  double partial = 0;
  std::int64_t kept = 0;
  for (Index i = threadIdx.x; i < n; i += blockDim.x) {
    partial += double(loss[i]);
    kept += targets[i] != ignore_index ? 1 : 0;
  }
  partial = block_reduce(partial, Sum{}, 0.0);
  kept = block_reduce(kept, Sum{}, std::int64_t(0));
  if (threadIdx.x == 0) {
    *sum = partial;
    *count = kept;
  }
}

}  // namespace

void cross_entropy_rows(float* logits, float* loss, const std::int32_t* targets, Index rows, Index vocab,
                        std::int32_t ignore_index, float grad_scale, bool want_grad, cudaStream_t stream) {
  if (rows == 0) return;
  cross_entropy_row_blocks<<<unsigned(rows), kRowThreads, 0, stream>>>(logits, loss, targets, vocab, ignore_index,
                                                                       grad_scale, want_grad);
  check_launch("cross_entropy_rows (cross_entropy_row_blocks)");
}

void loss_sum(double* sum, std::int64_t* count, const float* loss, const std::int32_t* targets, Index n,
              std::int32_t ignore_index, cudaStream_t stream) {
  loss_sum_block<<<1, kSumThreads, 0, stream>>>(sum, count, loss, targets, n, ignore_index);
  check_launch("loss_sum (loss_sum_block)");
}

}  // namespace llmtrain::model::cuda
