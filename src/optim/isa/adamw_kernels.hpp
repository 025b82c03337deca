// AdamW's element update, one variant per instruction set, chosen once at run time.
//
// Built like the model's element-wise kernels (src/model/isa/kernels.hpp): the same plain loop
// (adamw_update.inc) compiled once per instruction set in its own file (adamw_<isa>.cpp) with internal
// linkage, so that no copy built with wider instructions can replace baseline code at link time, and
// without FMA contraction, so that every variant gives the bits of the baseline.
// Plain types only: this header is included by the per-ISA files.
#pragma once

#include <cstdint>

#include "llmtrain/core/cpu_isa.hpp"

namespace llmtrain::optim::isa {

// The step's constants (AdamW::step): p = p * keep - step_size * m / (sqrt(v) / bias2_sqrt + eps) with the
// moments updated from clip * g first.
struct AdamWCoefficients {
  float keep, beta1, beta2, step_size, bias2_sqrt, eps, clip;
};

struct AdamWKernel {
  const char* isa;  // "sse2", "avx2", "avx512"
  // Updates p, m and v in place over n elements.
  void (*update)(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamWCoefficients& c);
};

const AdamWKernel& adamw_sse2();
const AdamWKernel& adamw_avx2();
const AdamWKernel& adamw_avx512();
// The variant built for `isa` (tests and benchmarks compare them; the caller checks cpu_runs(isa)).
const AdamWKernel& adamw_for(CpuIsa isa);
// The widest variant this CPU runs (chosen on first use).
const AdamWKernel& adamw_kernel();

}  // namespace llmtrain::optim::isa
