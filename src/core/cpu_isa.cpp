// The run-time CPU check behind the per-ISA kernel variants (see cpu_isa.hpp).
#include "llmtrain/core/cpu_isa.hpp"

namespace llmtrain {

bool cpu_runs(CpuIsa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case CpuIsa::Sse2:
      return true;
    case CpuIsa::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return false;
}

CpuIsa widest_cpu_isa() {
  static const CpuIsa widest = cpu_runs(CpuIsa::Avx512) ? CpuIsa::Avx512
                               : cpu_runs(CpuIsa::Avx2) ? CpuIsa::Avx2
                                                        : CpuIsa::Sse2;
  return widest;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Sse2:
      return "sse2";
    case CpuIsa::Avx2:
      return "avx2";
    case CpuIsa::Avx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace llmtrain
