// Every operation of the training step on a CUDA device, as host-callable launchers (defined in the .cu files
// beside this header; gemm in gemm_cublas.cpp). The device twins of ops.hpp and gemm.hpp: same names, same
// arguments, same conventions (activations written, parameter gradients and the residual gradient
// accumulated), float only, every pointer in device memory, every launch on `stream` and asynchronous.
// A failed launch throws llmtrain::Error naming the operation and CUDA's message (cuda_check.hpp).
// Reductions run in a fixed order without floating-point atomics, so a run repeats bitwise on one GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model::cuda {

using Index = std::int64_t;

// out[r, :] = table[tokens[r], :]
void embedding_forward(float* out, const float* table, const std::int32_t* tokens, Index rows, Index dim,
                       cudaStream_t stream);
// dtable[tokens[r], :] += dout[r, :], rows in order per column (repeated tokens add deterministically).
void embedding_backward(float* dtable, const float* dout, const std::int32_t* tokens, Index rows, Index dim,
                        cudaStream_t stream);

// out = x / rms(x) * w per row; rstd[r] kept for the backward pass.
void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, Index rows, Index dim, double eps,
                     cudaStream_t stream);
// dx += d(out)/dx . dout; dw += sum over rows of dout * x * rstd.
void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w, const float* rstd,
                      Index rows, Index dim, cudaStream_t stream);

// Rotary embedding in place on the first rotated_heads heads of each [rows, width] row (ops::rope_apply).
void rope_apply(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len, Index width,
                Index rotated_heads, Index head_dim, int direction, cudaStream_t stream);

// h13 = [gate | up]; out = silu(gate) * up (ops::swiglu_forward / swiglu_backward).
void swiglu_forward(float* out, const float* h13, Index rows, Index hidden, cudaStream_t stream);
void swiglu_backward(float* dh13, const float* dout, const float* h13, Index rows, Index hidden, cudaStream_t stream);

void copy(float* dst, const float* src, Index n, cudaStream_t stream);
void scale(float* x, float factor, Index n, cudaStream_t stream);
void fill(float* dst, float value, Index n, cudaStream_t stream);

// Cross-entropy over a chunk of logits [rows, vocab] in place (ops::cross_entropy_rows).
void cross_entropy_rows(float* logits, float* loss, const std::int32_t* targets, Index rows, Index vocab,
                        std::int32_t ignore_index, float grad_scale, bool want_grad, cudaStream_t stream);
// *sum = sum of loss[i] (in double, fixed order), *count = targets not equal to ignore_index; both device scalars.
void loss_sum(double* sum, std::int64_t* count, const float* loss, const std::int32_t* targets, Index n,
              std::int32_t ignore_index, cudaStream_t stream);

// Row-major C = alpha op(A) op(B) + beta C through cuBLAS (fp32: CUBLAS_COMPUTE_32F, never TF32) or cuBLASLt
// (bf16 operands rounded to nearest even, fp32 accumulation and C), as model::gemm on the host.
void gemm(Trans trans_a, Trans trans_b, Index m, Index n, Index k, float alpha, const float* a, Index lda,
          const float* b, Index ldb, float beta, float* c, Index ldc, Precision precision, cudaStream_t stream);
// Whether this device has bf16 tensor cores (compute capability 8.0 or later).
bool bf16_supported();

}  // namespace llmtrain::model::cuda
