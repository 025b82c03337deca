// The run-time CPU check behind the per-ISA kernel variants (see cpu_isa.hpp).
#include "llmtrain/core/cpu_isa.hpp"

#include <cpuid.h>

#include <cstdint>
#include <cstring>

namespace llmtrain {
namespace {

// XCR0: the register states the OS saves and restores (bits 17 and 18: AMX's tile configuration and data).
std::uint64_t xcr0() {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0;  // no OSXSAVE: no XGETBV
  std::uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (std::uint64_t(high) << 32) | low;
}

Bf16Hardware detect_bf16_hardware() {
  Bf16Hardware cpu;
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    if (std::strcmp(vendor, "GenuineIntel") == 0) cpu.vendor = CpuVendor::Intel;
    else if (std::strcmp(vendor, "AuthenticAMD") == 0) cpu.vendor = CpuVendor::Amd;
  }
  __builtin_cpu_init();
  cpu.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  const std::uint64_t tiles = (1ull << 17) | (1ull << 18);
  cpu.amx_bf16 = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 22)) && (xcr0() & tiles) == tiles;
  return cpu;
}

}  // namespace

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

Bf16Hardware bf16_hardware() {
  static const Bf16Hardware cpu = detect_bf16_hardware();
  return cpu;
}

std::string bf16_slower_reason(const Bf16Hardware& cpu) {
  if (cpu.vendor != CpuVendor::Intel || !cpu.avx512_bf16) return "";
  return cpu.amx_bf16 ? "an Intel CPU: its AVX512_BF16 dot products are no faster than fp32 FMAs, and llmtrain's bf16 "
                        "kernel does not use its AMX tiles"
                      : "an Intel CPU without AMX: its AVX512_BF16 dot products are no faster than fp32 FMAs";
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
