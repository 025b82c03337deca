// Whether bf16 products are slower than fp32, from the CPU's identity: on Intel CPUs (AVX512_BF16's dot
// product is no faster than fp32 FMAs there, and the kernel uses no AMX), not on AMD's, not where there is no
// AVX512_BF16 at all, and no claim about other vendors.
#include <gtest/gtest.h>

#include "llmtrain/core/cpu_isa.hpp"

namespace llmtrain {
namespace {

TEST(CpuIsa, Bf16IsSlowerThanFp32OnIntelCpus) {
  const std::string no_amx = bf16_slower_reason({CpuVendor::Intel, true, false});
  EXPECT_NE(no_amx.find("Intel CPU without AMX"), std::string::npos) << no_amx;
  const std::string amx = bf16_slower_reason({CpuVendor::Intel, true, true});
  EXPECT_NE(amx.find("does not use its AMX tiles"), std::string::npos) << amx;
}

TEST(CpuIsa, Bf16KeepsItsSpeedOnAmdAndIsNotJudgedElsewhere) {
  for (const bool amx : {false, true}) {
    EXPECT_EQ(bf16_slower_reason({CpuVendor::Amd, true, amx}), "");    // Zen 4 / Zen 5: 1.6-1.8x fp32
    EXPECT_EQ(bf16_slower_reason({CpuVendor::Other, true, amx}), "");  // not measured: no claim
    for (const CpuVendor vendor : {CpuVendor::Intel, CpuVendor::Amd, CpuVendor::Other})
      EXPECT_EQ(bf16_slower_reason({vendor, false, amx}), "");  // no bf16 products: fp32 runs instead
  }
}

TEST(CpuIsa, ThisCpusBf16HardwareIsConsistent) {
  const Bf16Hardware cpu = bf16_hardware();
  __builtin_cpu_init();
  EXPECT_EQ(cpu.avx512_bf16, __builtin_cpu_supports("avx512bf16") != 0);
  EXPECT_EQ(cpu.vendor == CpuVendor::Intel, __builtin_cpu_is("intel") != 0);
  EXPECT_EQ(cpu.vendor == CpuVendor::Amd, __builtin_cpu_is("amd") != 0);
  if (cpu.amx_bf16) {
    EXPECT_EQ(cpu.vendor, CpuVendor::Intel);
  }
}

}  // namespace
}  // namespace llmtrain
