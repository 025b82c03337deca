// The element-wise and reduction kernels of the decoder, forward and backward, as Kokkos parallel loops.
//
// Conventions (as in llm.c): activations are written (=), gradients of parameters are accumulated (+=),
// and so is the gradient flowing into the residual stream, which has two consumers. Every reduction that
// feeds a parameter gradient runs over rows inside one parallel index (one column), so results do not
// depend on thread scheduling: training is bitwise reproducible. Matrices are row-major [rows, cols].
// Templated on the scalar so that the gradient checks run the same code in double precision. The
// arithmetic of the row-wise kernels is in row_kernels.inc (one definition for every variant).
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

#include <type_traits>
#include <vector>

#include "fast_math.hpp"
#include "isa/kernels.hpp"

namespace llmtrain::model::ops {

using Index = std::int64_t;
using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<Index>>;

// Float kernels on the host run the variant for the widest instruction set the CPU has (isa/kernels.hpp);
// the same row functions, as Kokkos kernels, serve double (gradient checks) and GPUs.
#if defined(KOKKOS_ENABLE_CUDA)
template <typename T>
inline constexpr bool kHostFloat = false;
#else
template <typename T>
inline constexpr bool kHostFloat = std::is_same_v<T, float>;
#endif

#include "row_kernels.inc"

// out[r, :] = table[tokens[r], :]
template <typename T>
void embedding_forward(T* out, const T* table, const std::int32_t* tokens, Index rows, Index dim) {
  Kokkos::parallel_for("embedding_forward", Range(0, rows * dim), KOKKOS_LAMBDA(Index i) {
    const Index r = i / dim, j = i % dim;
    out[i] = table[Index(tokens[r]) * dim + j];
  });
}

// dtable[tokens[r], :] += dout[r, :]; one parallel index per column, rows in order (repeated tokens).
template <typename T>
void embedding_backward(T* dtable, const T* dout, const std::int32_t* tokens, Index rows, Index dim) {
  Kokkos::parallel_for("embedding_backward", Range(0, dim), KOKKOS_LAMBDA(Index j) {
    for (Index r = 0; r < rows; ++r) dtable[Index(tokens[r]) * dim + j] += dout[r * dim + j];
  });
}

// out = x / rms(x) * w per row; rstd[r] = 1 / sqrt(mean(x[r]^2) + eps) is kept for the backward pass.
template <typename T>
void rmsnorm_forward(T* out, T* rstd, const T* x, const T* w, Index rows, Index dim, double eps) {
  if constexpr (kHostFloat<T>) return isa::kernels().rmsnorm_forward(out, rstd, x, w, rows, dim, eps);
  Kokkos::parallel_for("rmsnorm_forward", Range(0, rows), KOKKOS_LAMBDA(Index r) {
    rstd[r] = rmsnorm_forward_row(out + r * dim, x + r * dim, w, dim, eps);
  });
}

// dx += d(out)/dx . dout (accumulates), dw += sum over rows of dout * x * rstd.
template <typename T>
void rmsnorm_backward(T* dx, T* dw, const T* dout, const T* x, const T* w, const T* rstd, Index rows, Index dim) {
  if constexpr (kHostFloat<T>) {
    isa::kernels().rmsnorm_backward_dx(dx, dout, x, w, rstd, rows, dim);
  } else {
    Kokkos::parallel_for("rmsnorm_backward_dx", Range(0, rows), KOKKOS_LAMBDA(Index r) {
      rmsnorm_backward_dx_row(dx + r * dim, dout + r * dim, x + r * dim, w, rstd[r], dim);
    });
  }
  if constexpr (kHostFloat<T>) {
    // Row by row into per-column partial sums: each column adds the same terms in the same order as the
    // kernel below (the same bits), but memory is read in order instead of one strided column at a time.
    std::vector<T> sum(std::size_t(dim), T(0));
    for (Index r = 0; r < rows; ++r)
      for (Index j = 0; j < dim; ++j)
        sum[std::size_t(j)] += rmsnorm_dw_term(dout[r * dim + j], x[r * dim + j], rstd[r]);
    for (Index j = 0; j < dim; ++j) dw[j] += sum[std::size_t(j)];
    return;
  }
  Kokkos::parallel_for("rmsnorm_backward_dw", Range(0, dim), KOKKOS_LAMBDA(Index j) {
    T sum = 0;
    for (Index r = 0; r < rows; ++r) sum += rmsnorm_dw_term(dout[r * dim + j], x[r * dim + j], rstd[r]);
    dw[j] += sum;
  });
}

// Rotary embedding (the "rotate half" convention of Hugging Face Llama/Granite) applied in place to the
// first `rotated_heads` heads of each row of a [rows, width] buffer (the query and key heads of the fused
// QKV output). Row r sits at position r % seq_len. cos_sin holds [max_seq_len, head_dim/2] pairs.
// direction = +1 rotates (forward); -1 applies the transposed rotation (backward of a rotation).
template <typename T>
void rope_apply(T* qk, const T* cos_table, const T* sin_table, Index rows, Index seq_len, Index width,
                Index rotated_heads, Index head_dim, int direction) {
  if constexpr (kHostFloat<T>)
    return isa::kernels().rope_apply(qk, cos_table, sin_table, rows, seq_len, width, rotated_heads, head_dim,
                                     direction);
  const Index half = head_dim / 2;
  Kokkos::parallel_for("rope", Range(0, rows * rotated_heads), KOKKOS_LAMBDA(Index i) {
    const Index r = i / rotated_heads, h = i % rotated_heads;
    rope_row(qk + r * width + h * head_dim, cos_table + (r % seq_len) * half, sin_table + (r % seq_len) * half, half,
             T(direction));
  });
}

// SwiGLU: h13 = [gate | up] (each `hidden` wide); out = silu(gate) * up.
template <typename T>
void swiglu_forward(T* out, const T* h13, Index rows, Index hidden) {
  if constexpr (kHostFloat<T>) return isa::kernels().swiglu_forward(out, h13, rows, hidden);
  Kokkos::parallel_for("swiglu_forward", Range(0, rows), KOKKOS_LAMBDA(Index r) {
    const T* g = h13 + r * 2 * hidden;
    swiglu_forward_row(out + r * hidden, g, g + hidden, hidden);
  });
}

template <typename T>
void swiglu_backward(T* dh13, const T* dout, const T* h13, Index rows, Index hidden) {
  if constexpr (kHostFloat<T>) return isa::kernels().swiglu_backward(dh13, dout, h13, rows, hidden);
  Kokkos::parallel_for("swiglu_backward", Range(0, rows), KOKKOS_LAMBDA(Index r) {
    const T* g = h13 + r * 2 * hidden;
    T* dg = dh13 + r * 2 * hidden;
    swiglu_backward_row(dg, dg + hidden, dout + r * hidden, g, g + hidden, hidden);
  });
}

// dst = src (n elements).
template <typename T>
void copy(T* dst, const T* src, Index n) {
  Kokkos::parallel_for("copy", Range(0, n), KOKKOS_LAMBDA(Index i) { dst[i] = src[i]; });
}

// x *= factor (n elements).
template <typename T>
void scale(T* x, T factor, Index n) {
  Kokkos::parallel_for("scale", Range(0, n), KOKKOS_LAMBDA(Index i) { x[i] *= factor; });
}

template <typename T>
void fill(T* dst, T value, Index n) {
  Kokkos::parallel_for("fill", Range(0, n), KOKKOS_LAMBDA(Index i) { dst[i] = value; });
}

// Cross-entropy over one chunk of logits [rows, vocab], in place. loss[r] receives the row's loss; with
// want_grad the logits become d(loss)/d(logits) times grad_scale (softmax minus one-hot), otherwise they
// are left as scratch (exponentials). Rows whose target is ignore_index get zero loss and zero gradient.
template <typename T>
void cross_entropy_rows(T* logits, T* loss, const std::int32_t* targets, Index rows, Index vocab,
                        std::int32_t ignore_index, T grad_scale, bool want_grad) {
  if constexpr (kHostFloat<T>)
    return isa::kernels().cross_entropy_rows(logits, loss, targets, rows, vocab, ignore_index, grad_scale, want_grad);
  Kokkos::parallel_for("cross_entropy", Range(0, rows), KOKKOS_LAMBDA(Index r) {
    loss[r] = cross_entropy_row(logits + r * vocab, targets[r], vocab, ignore_index, grad_scale, want_grad);
  });
}

}  // namespace llmtrain::model::ops
