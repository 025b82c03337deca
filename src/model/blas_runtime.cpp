// OpenBLAS kernel choice and threads (see blas_runtime.hpp for why the process re-executes itself).
#include "llmtrain/model/blas_runtime.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// OpenBLAS extensions, declared weak so that the program still links and runs against another BLAS.
extern "C" {
char* openblas_get_corename(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
}

namespace llmtrain::model {
namespace {

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// Kernel sets that already use AVX-512; anything else on an AVX-512 CPU is the fallback trap.
bool is_avx512_kernel(const std::string& name) {
  for (const char* fast : {"skylakex", "cooperlake", "sapphirerapids"}) {
    if (strcasecmp(name.c_str(), fast) == 0) return true;
  }
  return false;
}

}  // namespace

std::string blas_kernel_name() {
  if (openblas_get_corename == nullptr) return "unknown";
  const char* name = openblas_get_corename();
  return name ? std::string(name) : "unknown";
}

void ensure_fast_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  if (openblas_get_corename == nullptr || !cpu_has_avx512()) return;
  if (is_avx512_kernel(blas_kernel_name())) return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "llmtrain: could not re-execute with OPENBLAS_CORETYPE=SkylakeX (%s); using %s kernels\n",
               std::strerror(errno), blas_kernel_name().c_str());
}

void set_blas_threads(int threads) {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(threads);
}

}  // namespace llmtrain::model
