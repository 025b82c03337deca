// Picks the widest ASCII scan variant the running CPU supports (see ascii_scan.hpp).
#include "ascii_scan.hpp"

namespace llmtrain::tokenizer::isa {

const AsciiScanKernel& ascii_scan_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512:
      return ascii_scan_avx512();
    case CpuIsa::Avx2:
      return ascii_scan_avx2();
    case CpuIsa::Sse2:
      break;
  }
  return ascii_scan_sse2();
}

const AsciiScanKernel& ascii_scan_kernel() {
  static const AsciiScanKernel& chosen = ascii_scan_for(widest_cpu_isa());
  return chosen;
}

}  // namespace llmtrain::tokenizer::isa
