// Where the model's operations run: the seam between the decoder (model.hpp), written once, and the hardware.
//
// A Backend<T> runs every operation of a training step WHOLE (an embedding lookup over all rows, one
// normalisation, one attention call over the batch, one matrix product) on buffers of its own memory
// (buffer.hpp). The host backend (src/model/host_backend.cpp) runs the Kokkos kernels (ops.hpp), the tiled
// attention and BLAS; the CUDA backend (src/model/cuda/cuda_backend.cpp, float only) runs the device launchers
// (cuda/device_ops.hpp, cuda/attention_kernels.hpp) and cuBLAS, all on one compute stream, asynchronous. The
// conventions are ops.hpp's: activations are written, parameter gradients and the residual gradient added to.
// Every pointer an operation takes lies in the backend's memory; the unit store (unit_access.hpp) must hand
// out parameters and gradients there too.
#pragma once

#include <cstdint>
#include <memory>

#include "llmtrain/model/buffer.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

enum class Device { Cpu, Cuda };
const char* device_name(Device device);  // "cpu" | "cuda"

struct AttentionShape;  // attention_shape.hpp

struct LossSum {
  double sum = 0;          // summed cross-entropy over counted targets
  std::int64_t count = 0;  // targets not equal to ignore_index
  double mean() const { return count > 0 ? sum / double(count) : 0.0; }
};

template <typename T>
class Backend : public Memory {
 public:
  using Index = std::int64_t;

  virtual Device device() const = 0;

  // out[r, :] = table[tokens[r], :]; dtable[tokens[r], :] += dout[r, :] (rows in order: repeated tokens add
  // the same way every run).
  virtual void embedding_forward(T* out, const T* table, const std::int32_t* tokens, Index rows, Index dim) = 0;
  virtual void embedding_backward(T* dtable, const T* dout, const std::int32_t* tokens, Index rows, Index dim) = 0;
  // out = x / rms(x) * w per row, rstd kept; backward: dx += ..., dw += ...
  virtual void rmsnorm_forward(T* out, T* rstd, const T* x, const T* w, Index rows, Index dim, double eps) = 0;
  virtual void rmsnorm_backward(T* dx, T* dw, const T* dout, const T* x, const T* w, const T* rstd, Index rows,
                                Index dim) = 0;
  // Rotary embedding in place on the first rotated_heads heads of each [rows, width] row; direction -1 is the
  // backward pass.
  virtual void rope_apply(T* qk, const T* cos_table, const T* sin_table, Index rows, Index seq_len, Index width,
                          Index rotated_heads, Index head_dim, int direction) = 0;
  // h13 = [gate | up]; out = silu(gate) * up.
  virtual void swiglu_forward(T* out, const T* h13, Index rows, Index hidden) = 0;
  virtual void swiglu_backward(T* dh13, const T* dout, const T* h13, Index rows, Index hidden) = 0;
  virtual void copy(T* dst, const T* src, Index n) = 0;
  virtual void scale(T* x, T factor, Index n) = 0;
  virtual void fill(T* dst, T value, Index n) = 0;
  // Cross-entropy of a chunk of logits [rows, vocab], in place (ops::cross_entropy_rows).
  virtual void cross_entropy_rows(T* logits, T* loss, const std::int32_t* targets, Index rows, Index vocab,
                                  std::int32_t ignore_index, T grad_scale, bool want_grad) = 0;
  // The sum of loss[0, n) and the count of targets not equal to ignore_index, on the host (waits for them).
  virtual LossSum loss_sum(const T* loss, const std::int32_t* targets, Index n, std::int32_t ignore_index) = 0;

  // Causal grouped-query attention over `shape` (attention.hpp's layout), its products in `precision`. The
  // backend keeps the workspace of the last shape it saw. backward overwrites dqkv.
  virtual void attention_forward(const AttentionShape& shape, T* out, T* lse, const T* qkv, const std::int32_t* doc,
                                 Precision precision) = 0;
  virtual void attention_backward(const AttentionShape& shape, T* dqkv, const T* dout, const T* out, const T* lse,
                                  const T* qkv, const std::int32_t* doc, Precision precision) = 0;

  // Row-major C = alpha op(A) op(B) + beta C in `precision` (gemm.hpp). With reuse_b, B is the matrix of the
  // open begin_reuse(): it stays unchanged until end_reuse(), so a backend may keep it prepared between
  // products (the host keeps its bf16 packing: reused_operand.hpp). One reused matrix at a time.
  virtual void gemm(Trans trans_a, Trans trans_b, Index m, Index n, Index k, T alpha, const T* a, Index lda,
                    const T* b, Index ldb, T beta, T* c, Index ldc, Precision precision, bool reuse_b) = 0;
  virtual void begin_reuse(const T* b) = 0;
  virtual void end_reuse() = 0;

  // Returns once every operation queued so far has finished (phase timings read the clock after it).
  virtual void synchronize() = 0;
};

// The backend of `device` in this build: Cpu always; Cuda for float in a build with LLMTRAIN_ENABLE_CUDA=ON
// (elsewhere an llmtrain::Error says why not).
template <typename T>
std::unique_ptr<Backend<T>> make_backend(Device device);

// Whether Precision::Bf16 products run at bf16 speed on `device`: the CPU's AVX512_BF16 (bf16_supported(),
// gemm.hpp), the current CUDA device's compute capability (cuda::bf16_supported(); false in a build without CUDA).
bool bf16_supported(Device device);

}  // namespace llmtrain::model
