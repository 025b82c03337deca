// gemm() on the products of a `small` training step and of one block of fsdp_bench's model, fp32 against
// bf16, and the square 2048^3 product: GFLOP per CPU-second, median and best of the calls made in about a
// second per shape and precision. perf/torch_gemm_shapes.py runs the `small` shapes through PyTorch.
// With --poll-us N a progress poller (doing nothing) is installed at N microseconds, as FSDP training
// runs: products then go through the path that polls inside them (our AVX-512 kernels, or row panels).
// Usage: taskset -c 1 gemm_shapes_bench [--poll-us N]
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"

namespace model = llmtrain::model;
using model::Trans;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Shape {
  const char* name;
  Trans ta, tb;
  long m, n, k;
};

// `small`: 1024 tokens, dim 768, SwiGLU 2048 (w1 holds gate and up), the head in chunks of 256 rows.
const Shape kShapes[] = {
    {"square 2048", Trans::No, Trans::No, 2048, 2048, 2048}, {"w1 forward", Trans::No, Trans::Yes, 1024, 4096, 768},
    {"w1 dX", Trans::No, Trans::No, 1024, 768, 4096},        {"w1 dW", Trans::Yes, Trans::No, 4096, 768, 1024},
    {"head forward", Trans::No, Trans::Yes, 256, 50257, 768}, {"head dX", Trans::No, Trans::No, 256, 768, 50257},
    {"head dW", Trans::Yes, Trans::No, 50257, 768, 256},
    // Attention's tiles (128 queries x 128 keys, head_dim 64): scores, P V and dQ, dV and dK.
    {"attn QK^T", Trans::No, Trans::Yes, 128, 128, 64},       {"attn PV", Trans::No, Trans::No, 128, 64, 128},
    {"attn P^T dO", Trans::Yes, Trans::No, 128, 64, 128},
    // fsdp_bench --rows 5: 640 tokens, dim 512, 4 of 8 heads for K and V (QKV 1024 wide), SwiGLU 1536.
    {"fsdp QKV fwd", Trans::No, Trans::Yes, 640, 1024, 512},  {"fsdp QKV dX", Trans::No, Trans::No, 640, 512, 1024},
    {"fsdp QKV dW", Trans::Yes, Trans::No, 1024, 512, 640},   {"fsdp w1 fwd", Trans::No, Trans::Yes, 640, 3072, 512},
    {"fsdp w1 dX", Trans::No, Trans::No, 640, 512, 3072},     {"fsdp w1 dW", Trans::Yes, Trans::No, 3072, 512, 640},
    {"fsdp w2 fwd", Trans::No, Trans::Yes, 640, 512, 1536},   {"fsdp w2 dW", Trans::Yes, Trans::No, 512, 1536, 640},
};

}  // namespace

int main(int argc, char** argv) {
  model::ensure_fast_blas_kernels(argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  long poll_us = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--poll-us") == 0) poll_us = std::atol(argv[i + 1]);
  const llmtrain::ProgressScope polling([] {}, poll_us);
  std::printf("polling: %s\n", poll_us > 0 ? (std::to_string(poll_us) + " us").c_str() : "none");
  std::printf("BLAS kernels: %s, bf16 products: %s\n", model::blas_kernel_name().c_str(),
              model::bf16_supported() ? "AVX512_BF16" : "emulated");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::printf("%-14s %22s %22s %8s\n", "GFLOP/CPU-s", "fp32 median (best)", "bf16 median (best)", "bf16/fp32");
  for (const Shape& s : kShapes) {
    std::vector<float> a(std::size_t(s.m * s.k)), b(std::size_t(s.k * s.n)), c(std::size_t(s.m * s.n));
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    const long lda = s.ta == Trans::No ? s.k : s.m, ldb = s.tb == Trans::No ? s.n : s.k;
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    double median[2], best[2];
    for (int p = 0; p < 2; ++p) {
      const auto precision = p == 0 ? model::Precision::Fp32 : model::Precision::Bf16;
      std::vector<double> rates;
      const double start = cpu_seconds();
      for (int call = 0; call < 4 || (cpu_seconds() - start < 1.0 && call < 40); ++call) {
        const double t0 = cpu_seconds();
        model::gemm<float>(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n,
                           precision);
        if (call > 0) rates.push_back(flops / (cpu_seconds() - t0) / 1e9);  // the first call warms up
      }
      std::sort(rates.begin(), rates.end());
      median[p] = rates[rates.size() / 2];
      best[p] = rates.back();
    }
    std::printf("%-14s %12.1f (%6.1f) %12.1f (%6.1f) %7.2fx\n", s.name, median[0], best[0], median[1], best[1],
                median[1] / median[0]);
  }
  return 0;
}
