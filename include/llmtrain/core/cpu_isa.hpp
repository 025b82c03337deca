// Which instruction-set variant of the host kernels the running CPU can execute.
//
// The build targets baseline x86-64 (SSE2) so that binaries run anywhere; areas with per-ISA kernel
// variants (model's element-wise kernels, optim's AdamW) pick one through this single check, so that
// every area uses the same variant and --version can name it once.
#pragma once

namespace llmtrain {

enum class CpuIsa { Sse2, Avx2, Avx512 };

// Whether this CPU has every instruction the variant for `isa` is built with (AVX2 with FMA; AVX-512
// F/BW/DQ/VL). Sse2 is always true.
bool cpu_runs(CpuIsa isa);

// The widest variant this CPU runs (checked once).
CpuIsa widest_cpu_isa();

// "sse2", "avx2", "avx512".
const char* cpu_isa_name(CpuIsa isa);

// The one table of an area's per-ISA variants (each area's isa/select.cpp): the accessor of each variant,
// in CpuIsa's order. Only the accessor asked for is called: the others live in objects built with
// instructions this CPU may lack.
template <typename Variant>
struct IsaVariants {
  const Variant& (*by_isa[3])();  // sse2, avx2, avx512
  const Variant& operator()(CpuIsa isa) const { return by_isa[static_cast<int>(isa)](); }
};

}  // namespace llmtrain
