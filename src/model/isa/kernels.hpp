// Host float element-wise kernels, one variant per instruction set, chosen once at run time.
//
// The build targets baseline x86-64 (SSE2) so that binaries run anywhere; each variant is the same plain
// loops (../row_kernels.inc) compiled with its set's flags in its own file (kernels_<isa>.cpp) with internal
// linkage. Internal linkage is the point: templates or inline functions instantiated in a file built with
// AVX-512 flags could otherwise be merged by the linker into the baseline code, which then crashes on CPUs
// without AVX-512. Variants are built with -ffp-contract=off, so all of them give the same bits.
// Plain types only: this header is included by the per-ISA files.
#pragma once

#include <cstdint>

#include "llmtrain/core/cpu_isa.hpp"

namespace llmtrain::model::isa {

struct ElementwiseKernels {
  const char* isa;  // "sse2", "avx2", "avx512"
  void (*rmsnorm_forward)(float* out, float* rstd, const float* x, const float* w, std::int64_t rows,
                          std::int64_t dim, double eps);
  void (*rmsnorm_backward_dx)(float* dx, const float* dout, const float* x, const float* w, const float* rstd,
                              std::int64_t rows, std::int64_t dim);
  void (*swiglu_forward)(float* out, const float* h13, std::int64_t rows, std::int64_t hidden);
  void (*swiglu_backward)(float* dh13, const float* dout, const float* h13, std::int64_t rows, std::int64_t hidden);
  void (*cross_entropy_rows)(float* logits, float* loss, const std::int32_t* targets, std::int64_t rows,
                             std::int64_t vocab, std::int32_t ignore_index, float grad_scale, bool want_grad);
  void (*rope_apply)(float* qk, const float* cos_table, const float* sin_table, std::int64_t rows,
                     std::int64_t seq_len, std::int64_t width, std::int64_t rotated_heads, std::int64_t head_dim,
                     int direction);
  // Attention's softmax tiles (attention.cpp): rows are queries qs + i, columns keys ks + j; o and lse start
  // at the tile's first query row.
  void (*attention_softmax_tile)(float* scores, float* row_max, float* row_sum, float* o, std::int64_t ldo,
                                 std::int64_t tq, std::int64_t tk, std::int64_t head_dim, float scale, std::int64_t qs,
                                 std::int64_t ks, bool needs_mask, const std::int32_t* doc);
  void (*attention_probs_tile)(float* probs, const float* lse, std::int64_t tq, std::int64_t tk, float scale,
                               std::int64_t qs, std::int64_t ks, bool needs_mask, const std::int32_t* doc);
  void (*attention_dscores_tile)(float* dscores, const float* probs, const float* delta, std::int64_t tq,
                                 std::int64_t tk, float scale);
};

const ElementwiseKernels& kernels_sse2();
const ElementwiseKernels& kernels_avx2();
const ElementwiseKernels& kernels_avx512();

// The variant built for `isa` (tests and benchmarks compare them; the caller checks cpu_runs(isa)).
const ElementwiseKernels& kernels_for(CpuIsa isa);
// The widest variant this CPU runs (chosen on first use).
const ElementwiseKernels& kernels();

}  // namespace llmtrain::model::isa
