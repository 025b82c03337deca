// Which instruction-set variant of the host kernels the running CPU can execute.
//
// The build targets baseline x86-64 (SSE2) so that binaries run anywhere; areas with per-ISA kernel
// variants (model's element-wise kernels, optim's AdamW) pick one through this single check, so that
// every area uses the same variant and --version can name it once.
#pragma once

#include <string>

namespace llmtrain {

enum class CpuIsa { Sse2, Avx2, Avx512 };

// Whether this CPU has every instruction the variant for `isa` is built with (AVX2 with FMA; AVX-512
// F/BW/DQ/VL). Sse2 is always true.
bool cpu_runs(CpuIsa isa);

// The widest variant this CPU runs (checked once).
CpuIsa widest_cpu_isa();

// "sse2", "avx2", "avx512".
const char* cpu_isa_name(CpuIsa isa);

// What decides whether bf16 products pay off on a CPU: who made it, whether it has the AVX512_BF16 dot
// product (VDPBF16PS, what the bf16 kernel runs on), and whether it has AMX-BF16 tiles enabled by the OS.
enum class CpuVendor { Intel, Amd, Other };
struct Bf16Hardware {
  CpuVendor vendor = CpuVendor::Other;
  bool avx512_bf16 = false;
  bool amx_bf16 = false;  // CPUID.(7,0):EDX[22], with the tile state enabled in XCR0 (bits 17 and 18)
};

// This CPU's (checked once).
Bf16Hardware bf16_hardware();

// Why train.precision = "bf16" is slower than fp32 on such a CPU, for the start-up warning and --version;
// empty where it is not (or where there are no bf16 products: no AVX512_BF16). Intel's VDPBF16PS does two
// products per lane at half the rate of its two FMA units, so it is no faster than fp32 and the rounding
// costs extra (Emerald Rapids, one core: 94 tokens/s against fp32's 167; PyTorch's autocast likewise); AMX
// would be faster, but the bf16 kernel does not use it. AMD's Zen 4 and Zen 5 run it at full rate (1.6-1.8x
// fp32). Other vendors: not known, no claim.
std::string bf16_slower_reason(const Bf16Hardware& cpu);

// The one table of an area's per-ISA variants (each area's isa/select.cpp): the accessor of each variant,
// in CpuIsa's order. Only the accessor asked for is called: the others live in objects built with
// instructions this CPU may lack.
template <typename Variant>
struct IsaVariants {
  const Variant& (*by_isa[3])();  // sse2, avx2, avx512
  const Variant& operator()(CpuIsa isa) const { return by_isa[static_cast<int>(isa)](); }
};

}  // namespace llmtrain
