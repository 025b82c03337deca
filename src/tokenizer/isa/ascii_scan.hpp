// The tokenizer's ASCII scan, one variant per instruction set, chosen once at run time.
//
// UTF-8 validation (unicode::first_invalid, run on every encoded text and every vocabulary token) spends
// its time stepping over ASCII bytes one at a time. The scan below finds the end of an ASCII stretch in
// blocks of 64 bytes whose OR is a plain loop the compiler vectorises at each set's width. Built like
// AdamW's variants (src/optim/isa/adamw_kernels.hpp): the same loop (ascii_scan.inc) compiled once per
// instruction set in its own file (ascii_scan_<isa>.cpp) with internal linkage, so that no copy built with
// wider instructions can replace baseline code at link time. The variants return the same offset (integer
// code, no rounding). The CPU check is the shared one (core/cpu_isa.hpp), so the tokenizer runs the same
// instruction set as the model's element-wise kernels that --version names.
#pragma once

#include <cstddef>

#include "llmtrain/core/cpu_isa.hpp"

namespace llmtrain::tokenizer::isa {

struct AsciiScanKernel {
  const char* isa;  // "sse2", "avx2", "avx512"
  // Offset of the first byte >= 0x80 in p[0, n), or n if all n bytes are ASCII.
  std::size_t (*ascii_prefix)(const unsigned char* p, std::size_t n);
};

const AsciiScanKernel& ascii_scan_sse2();
const AsciiScanKernel& ascii_scan_avx2();
const AsciiScanKernel& ascii_scan_avx512();
// The variant built for `isa` (tests and benchmarks compare them; the caller checks cpu_runs(isa)).
const AsciiScanKernel& ascii_scan_for(CpuIsa isa);
// The widest variant this CPU runs (chosen on first use).
const AsciiScanKernel& ascii_scan_kernel();

}  // namespace llmtrain::tokenizer::isa
