// One training step of a model preset on one core: tokens/s, MFU against the gemm peak (in the same
// precision) measured in the same run, and the share of the step's time spent outside gemm.
//
// Usage: train_step_bench [--preset small|tiny] [--seq N] [--rows N] [--steps N] [--recompute none|blocks]
//                         [--precision fp32|bf16]
// Runs with one BLAS thread. Re-executes itself with the OPENBLAS_CORETYPE that is the fast kernel set (see include/llmtrain/model/blas_runtime.hpp); set OPENBLAS_CORETYPE yourself to compare.
#include <Kokkos_Core.hpp>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/optim/grad_clip.hpp"
#include "presets.hpp"

using namespace llmtrain;

// CPU time of this process: on a shared machine it is what the step cost, whatever else was running.
static double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// A gemm peak probe timed in CPU time, which other processes do not disturb: the best call is enough.
static double gemm_peak_cpu_time(model::Precision precision, std::int64_t n, int repeats) {
  Kokkos::View<float*> a("a", n * n), b("b", n * n), c("c", n * n);
  Kokkos::deep_copy(a, 0.5f);
  Kokkos::deep_copy(b, 0.25f);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double start = cpu_seconds();
    model::gemm<float>(model::Trans::No, model::Trans::No, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n,
                              precision);
    best = std::min(best, cpu_seconds() - start);
  }
  return 2.0 * double(n) * double(n) * double(n) / best;
}

int main(int argc, char** argv) {
  model::ensure_fast_blas_kernels(argv);
  model::set_blas_threads(1);
  std::string preset = "small", recompute = "none", precision_name = "fp32";
  std::int64_t seq = 1024, rows = 1, steps = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--preset") preset = value;
    else if (key == "--seq") seq = std::stoll(value);
    else if (key == "--rows") rows = std::stoll(value);
    else if (key == "--steps") steps = std::stoll(value);
    else if (key == "--recompute") recompute = value;
    else if (key == "--precision") precision_name = value;
    else { std::fprintf(stderr, "unknown option %s\n", key.c_str()); return 2; }
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  ModelConfig config = perf::preset(preset);
  config.max_seq_len = std::max(config.max_seq_len, seq);
  const model::Precision precision = model::parse_precision(precision_name);
  const double peak = model::measure_gemm_peak(precision, 2048, 1.0);
  const double cpu_peak = gemm_peak_cpu_time(precision, 2048, 3);
  std::printf("blas kernels: %s, %s gemm peak (2048^3, 1 thread): %.1f GFLOP/s wall-clock (90th percentile over "
              "1 s), %.1f GFLOP/s CPU time\n",
              model::blas_kernel_name().c_str(), precision_name.c_str(), peak / 1e9, cpu_peak / 1e9);
  std::printf("model: %s, %.1fM parameters, rows %lld x seq %lld, recompute %s, precision %s\n", preset.c_str(),
              double(config.parameter_count()) / 1e6, static_cast<long long>(rows), static_cast<long long>(seq),
              recompute.c_str(), precision_name.c_str());
  {
    model::LocalUnits<float> units(config);
    model::Model<float> net(config, model::parse_recompute(recompute), units, precision);
    optim::AdamW adamw(units.params(), optim::AdamWOptions{});
    Batch batch;
    batch.rows = rows;
    batch.seq_len = seq;
    std::mt19937 rng(1);
    std::uniform_int_distribution<std::int32_t> token(0, std::int32_t(config.vocab_size - 1));
    for (std::int64_t i = 0; i < rows * (seq + 1); ++i) batch.tokens.push_back(token(rng));
    for (std::int64_t s = 0; s <= steps; ++s) {  // step 0 warms up (allocations, page faults)
      model::reset_gemm_stats();
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = cpu_seconds();
      units.zero_grads();
      const double loss = net.forward_backward(batch, 1.0).mean();
      const auto optimizer_start = std::chrono::steady_clock::now();
      const double norm = std::sqrt(model::sum_of_squares(units.grads()));
      adamw.step(units.params(), units.grads(), 1e-4, optim::clip_factor(norm, 1.0));
      const auto end = std::chrono::steady_clock::now();
      const double cpu = cpu_seconds() - cpu_start;
      const double total = std::chrono::duration<double>(end - start).count();
      const double opt_s = std::chrono::duration<double>(end - optimizer_start).count();
      const auto g = model::gemm_stats();
      const double flops = config.train_flops(rows * seq, seq);
      std::printf("%s %lld: loss %.4f | %.2f s (fwd %.2f, bwd %.2f, opt %.2f) | %.0f tokens/s | MFU %.1f%% | "
                  "gemm %.1f GFLOP/s on %.2f s, outside gemm %.1f%% | CPU %.2f s, %.0f tokens/CPU-s, MFU(CPU) %.1f%%\n",
                  s == 0 ? "warmup" : "step", static_cast<long long>(s), loss, total, net.last_pass_times().forward_s,
                  net.last_pass_times().backward_s, opt_s, double(rows * seq) / total, 100.0 * flops / total / peak,
                  g.flops / g.seconds / 1e9, g.seconds, 100.0 * (total - g.seconds) / total, cpu,
                  double(rows * seq) / cpu, 100.0 * flops / cpu / cpu_peak);
    }
  }
  return 0;
}
