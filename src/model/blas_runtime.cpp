// OpenBLAS kernel choice and threads (see blas_runtime.hpp for why the process re-executes itself).
#include "llmtrain/model/blas_runtime.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/core/reexec.hpp"

// OpenBLAS extensions, declared weak so that the program still links and runs against another BLAS.
extern "C" {
char* openblas_get_corename(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
}

namespace llmtrain::model {
namespace {

bool cpu_has_avx512_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
}

bool name_in(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (strcasecmp(name.c_str(), n) == 0) return true;
  }
  return false;
}

// The kernel set this CPU should run, given the one OpenBLAS picked: on AVX512_BF16 CPUs one with the bf16
// sbgemm kernels (SkylakeX's sbgemm is a slow generic loop), on other AVX-512 CPUs any AVX-512 set.
// Empty: keep the current one.
std::string wanted_kernel(const std::string& current) {
  if (!cpu_runs(CpuIsa::Avx512)) return "";
  if (cpu_has_avx512_bf16()) return name_in(current, {"cooperlake", "sapphirerapids"}) ? "" : "Cooperlake";
  return name_in(current, {"skylakex", "cooperlake", "sapphirerapids"}) ? "" : "SkylakeX";
}

}  // namespace

std::string blas_kernel_name() {
  if (openblas_get_corename == nullptr) return "unknown";
  const char* name = openblas_get_corename();
  return name ? std::string(name) : "unknown";
}

void ensure_fast_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  if (openblas_get_corename == nullptr) return;
  const std::string wanted = wanted_kernel(blas_kernel_name());
  if (wanted.empty()) return;
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
  reexecute_self(argv);
  std::fprintf(stderr, "llmtrain: could not re-execute with OPENBLAS_CORETYPE=%s (%s); using %s kernels\n",
               wanted.c_str(), std::strerror(errno), blas_kernel_name().c_str());
}

void set_blas_threads(int threads) {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(threads);
}

}  // namespace llmtrain::model
