// Host kernels, baseline against dispatched (Google Benchmark): each element-wise kernel in its SSE2
// variant and in every wider variant this CPU runs (src/model/isa/), and the gemm dispatch in fp32 and bf16,
// on the shapes of one `small` step (1024 tokens, d_model 768, d_ff 2048, vocabulary 50257).
// Usage: kernels_bench [--benchmark_filter=...]; run pinned (taskset -c N) and compare CPU times.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "isa/kernels.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"

namespace {

using llmtrain::model::isa::ElementwiseKernels;

std::vector<float> random_floats(std::size_t n, float scale) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

constexpr std::int64_t kTokens = 1024, kDim = 768, kHidden = 2048, kVocab = 50257, kHeadRows = 256;

void rmsnorm(benchmark::State& state, const ElementwiseKernels* k) {
  const auto x = random_floats(kTokens * kDim, 1.0f), w = random_floats(kDim, 1.0f), d = random_floats(x.size(), 1.0f);
  std::vector<float> out(x.size()), rstd(kTokens), dx(x.size());
  for (auto _ : state) {
    k->rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), kTokens, kDim, 1e-5);
    k->rmsnorm_backward_dx(dx.data(), d.data(), x.data(), w.data(), rstd.data(), kTokens, kDim);
    benchmark::DoNotOptimize(dx.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * kDim);
}

void swiglu(benchmark::State& state, const ElementwiseKernels* k) {
  const auto h13 = random_floats(kTokens * 2 * kHidden, 2.0f), d = random_floats(kTokens * kHidden, 1.0f);
  std::vector<float> out(kTokens * kHidden), dh(h13.size());
  for (auto _ : state) {
    k->swiglu_forward(out.data(), h13.data(), kTokens, kHidden);
    k->swiglu_backward(dh.data(), d.data(), h13.data(), kTokens, kHidden);
    benchmark::DoNotOptimize(dh.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * kHidden);
}

void cross_entropy(benchmark::State& state, const ElementwiseKernels* k) {
  const auto logits = random_floats(kHeadRows * kVocab, 3.0f);
  std::vector<float> z(logits.size()), loss(kHeadRows);
  std::vector<std::int32_t> targets(kHeadRows);
  for (std::int64_t r = 0; r < kHeadRows; ++r) targets[r] = std::int32_t(r * 97 % kVocab);
  for (auto _ : state) {
    state.PauseTiming();
    z = logits;
    state.ResumeTiming();
    k->cross_entropy_rows(z.data(), loss.data(), targets.data(), kHeadRows, kVocab, -100, 1.0f, true);
    benchmark::DoNotOptimize(z.data());
  }
  state.SetItemsProcessed(state.iterations() * kHeadRows * kVocab);
}

// The QKV projection of one `small` block (1024 x 1280 x 768), fp32 against bf16 through gemm().
void gemm(benchmark::State& state, llmtrain::model::Precision precision) {
  const std::int64_t m = kTokens, n = 1280, k = kDim;
  const auto a = random_floats(m * k, 1.0f), b = random_floats(n * k, 1.0f);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    llmtrain::model::gemm<float>(llmtrain::model::Trans::No, llmtrain::model::Trans::Yes, m, n, k, 1.0f, a.data(), k,
                                 b.data(), k, 0.0f, c.data(), n, precision);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(m * n * k) * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  llmtrain::model::ensure_fast_blas_kernels(argv);
  llmtrain::model::set_blas_threads(1);
  std::vector<const ElementwiseKernels*> variants = {&llmtrain::model::isa::kernels_sse2()};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    variants.push_back(&llmtrain::model::isa::kernels_avx2());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    variants.push_back(&llmtrain::model::isa::kernels_avx512());
  for (const auto* v : variants) {
    benchmark::RegisterBenchmark((std::string("rmsnorm_fwd_bwd/") + v->isa).c_str(), rmsnorm, v);
    benchmark::RegisterBenchmark((std::string("swiglu_fwd_bwd/") + v->isa).c_str(), swiglu, v);
    benchmark::RegisterBenchmark((std::string("cross_entropy/") + v->isa).c_str(), cross_entropy, v);
  }
  benchmark::RegisterBenchmark("gemm_qkv/fp32", gemm, llmtrain::model::Precision::Fp32);
  benchmark::RegisterBenchmark("gemm_qkv/bf16", gemm, llmtrain::model::Precision::Bf16);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("BLAS kernels: %s\n", llmtrain::model::blas_kernel_name().c_str());
  return 0;
}
