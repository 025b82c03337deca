// The host backend (host_backend.hpp): each operation of backend.hpp is the ops:: kernel, Attention<T> or
// gemm() the model called directly before the seam, with the same arguments, so results are bitwise
// those of that code.
//
// Memory is Kokkos' (kokkos_malloc in the default memory space, aligned as a View's and seen by the
// tracker as Views are). The attention tiles are Attention<T>'s own Views, rebuilt when the shape or the
// precision changes. The head's weight, reused by every chunk of logits, keeps its bf16 packing between
// those products through a ReusedOperandB (float only; double ignores reuse).
#include "host_backend.hpp"

#include <Kokkos_Core.hpp>

#include <optional>
#include <type_traits>

#include "attention.hpp"
#include "ops.hpp"
#include "reused_operand.hpp"

namespace llmtrain::model {
namespace {

using Bytes = Kokkos::View<unsigned char*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstBytes = Kokkos::View<const unsigned char*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostBytes = Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstHostBytes = Kokkos::View<const unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <typename T>
class HostBackend final : public Backend<T> {
 public:
  using Index = std::int64_t;

  Device device() const override { return Device::Cpu; }

  void copy_from_host(void* dst, const void* host, Index bytes) override {
    Kokkos::deep_copy(Bytes(static_cast<unsigned char*>(dst), bytes),
                      ConstHostBytes(static_cast<const unsigned char*>(host), bytes));
  }
  void copy_to_host(void* host, const void* src, Index bytes) override {
    Kokkos::deep_copy(HostBytes(static_cast<unsigned char*>(host), bytes),
                      ConstBytes(static_cast<const unsigned char*>(src), bytes));
  }

  void embedding_forward(T* out, const T* table, const std::int32_t* tokens, Index rows, Index dim) override {
    ops::embedding_forward(out, table, tokens, rows, dim);
  }
  void embedding_backward(T* dtable, const T* dout, const std::int32_t* tokens, Index rows, Index dim) override {
    ops::embedding_backward(dtable, dout, tokens, rows, dim);
  }
  void rmsnorm_forward(T* out, T* rstd, const T* x, const T* w, Index rows, Index dim, double eps) override {
    ops::rmsnorm_forward(out, rstd, x, w, rows, dim, eps);
  }
  void rmsnorm_backward(T* dx, T* dw, const T* dout, const T* x, const T* w, const T* rstd, Index rows,
                        Index dim) override {
    ops::rmsnorm_backward(dx, dw, dout, x, w, rstd, rows, dim);
  }
  void rope_apply(T* qk, const T* cos_table, const T* sin_table, Index rows, Index seq_len, Index width,
                  Index rotated_heads, Index head_dim, int direction) override {
    ops::rope_apply(qk, cos_table, sin_table, rows, seq_len, width, rotated_heads, head_dim, direction);
  }
  void swiglu_forward(T* out, const T* h13, Index rows, Index hidden) override {
    ops::swiglu_forward(out, h13, rows, hidden);
  }
  void swiglu_backward(T* dh13, const T* dout, const T* h13, Index rows, Index hidden) override {
    ops::swiglu_backward(dh13, dout, h13, rows, hidden);
  }
  void copy(T* dst, const T* src, Index n) override { ops::copy(dst, src, n); }
  void scale(T* x, T factor, Index n) override { ops::scale(x, factor, n); }
  void fill(T* dst, T value, Index n) override { ops::fill(dst, value, n); }
  void cross_entropy_rows(T* logits, T* loss, const std::int32_t* targets, Index rows, Index vocab,
                          std::int32_t ignore_index, T grad_scale, bool want_grad) override {
    ops::cross_entropy_rows(logits, loss, targets, rows, vocab, ignore_index, grad_scale, want_grad);
  }
  LossSum loss_sum(const T* loss, const std::int32_t* targets, Index n, std::int32_t ignore_index) override {
    LossSum result;
    Kokkos::parallel_reduce("loss_sum", ops::Range(0, n),
                            KOKKOS_LAMBDA(Index i, double& sum) { sum += double(loss[i]); }, result.sum);
    Kokkos::parallel_reduce(
        "loss_count", ops::Range(0, n),
        KOKKOS_LAMBDA(Index i, std::int64_t& count) { count += targets[i] != ignore_index ? 1 : 0; }, result.count);
    return result;
  }

  void attention_forward(const AttentionShape& shape, T* out, T* lse, const T* qkv, const std::int32_t* doc,
                         Precision precision) override {
    attention(shape, precision).forward(out, lse, qkv, doc);
  }
  void attention_backward(const AttentionShape& shape, T* dqkv, const T* dout, const T* out, const T* lse,
                          const T* qkv, const std::int32_t* doc, Precision precision) override {
    attention(shape, precision).backward(dqkv, dout, out, lse, qkv, doc);
  }

  void gemm(Trans trans_a, Trans trans_b, Index m, Index n, Index k, T alpha, const T* a, Index lda, const T* b,
            Index ldb, T beta, T* c, Index ldc, Precision precision, bool reuse_b) override {
    if constexpr (std::is_same_v<T, float>)
      if (reuse_b)
        return gemm_reusing_b(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, reused_);
    model::gemm<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision);
  }
  void begin_reuse(const T* b) override {
    if constexpr (std::is_same_v<T, float>) promise_.emplace(reused_, b);
  }
  void end_reuse() override { promise_.reset(); }

  void synchronize() override { Kokkos::fence(); }

 private:
  void* allocate_zeroed(Index bytes, const char* label) override {
    void* data = Kokkos::kokkos_malloc(label, std::size_t(bytes));
    Kokkos::deep_copy(Bytes(static_cast<unsigned char*>(data), bytes), 0);
    return data;
  }
  void release(void* data, Index) noexcept override { Kokkos::kokkos_free(data); }

  Attention<T>& attention(const AttentionShape& shape, Precision precision) {
    if (!attention_ || !(attention_shape_ == shape) || attention_precision_ != precision) {
      attention_.reset();  // its tiles go before the next ones come
      attention_.emplace(shape, precision);
      attention_shape_ = shape;
      attention_precision_ = precision;
    }
    return *attention_;
  }

  std::optional<Attention<T>> attention_;
  AttentionShape attention_shape_;
  Precision attention_precision_ = Precision::Fp32;
  ReusedOperandB reused_;  // the head weight's packed bf16 copies, kept for the next head pass
  std::optional<ReusedOperandB::Promise> promise_;
};

}  // namespace

template <typename T>
std::unique_ptr<Backend<T>> make_host_backend() {
  return std::make_unique<HostBackend<T>>();
}

template std::unique_ptr<Backend<float>> make_host_backend<float>();
template std::unique_ptr<Backend<double>> make_host_backend<double>();

}  // namespace llmtrain::model
