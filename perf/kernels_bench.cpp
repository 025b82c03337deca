// Host kernels, baseline against dispatched (Google Benchmark): each element-wise kernel in its SSE2
// variant and in every wider variant this CPU runs (src/model/isa/, src/optim/isa/), and the gemm dispatch
// in fp32 and bf16, on the shapes of one `small` step (1024 tokens, d_model 768, d_ff 2048, vocabulary 50257,
// 12 query and 4 key/value heads of 64, attention tiles of 128).
// Usage: kernels_bench [--benchmark_filter=...]; run pinned (taskset -c N) and compare CPU times.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "isa/adamw_kernels.hpp"
#include "isa/kernels.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"

namespace {

using llmtrain::CpuIsa;
using llmtrain::model::isa::ElementwiseKernels;
using llmtrain::optim::isa::AdamWKernel;

std::vector<float> random_floats(std::size_t n, float scale) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// n random floats from a 64-byte boundary: the trainer's buffers are Kokkos Views, aligned to 64 bytes, and
// AVX-512 loads and stores that straddle cache lines made AdamW ~1.7x slower (std::vector's 16-byte alignment).
class AlignedFloats {
 public:
  AlignedFloats(std::size_t n, float scale) : storage_(random_floats(n + 15, scale)) {
    const auto misalignment = reinterpret_cast<std::uintptr_t>(storage_.data()) % 64;
    data_ = storage_.data() + (misalignment ? (64 - misalignment) / sizeof(float) : 0);
  }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  float* data() { return data_; }
  float& operator[](std::size_t i) { return data_[i]; }

 private:
  std::vector<float> storage_;
  float* data_;
};

constexpr std::int64_t kTokens = 1024, kDim = 768, kHidden = 2048, kVocab = 50257, kHeadRows = 256;
constexpr std::int64_t kHeads = 12, kKvHeads = 4, kHeadDim = 64, kTile = 128;

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

// RoPE on the query and key heads of one block's QKV output, forward then backward.
void rope(benchmark::State& state, const ElementwiseKernels* k) {
  const std::int64_t width = (kHeads + 2 * kKvHeads) * kHeadDim, half = kHeadDim / 2;
  AlignedFloats qkv(kTokens * width, 1.0f), cos_table(kTokens * half, 1.0f), sin_table(kTokens * half, 1.0f);
  for (std::int64_t i = 0; i < kTokens * half; ++i) {
    cos_table[i] = std::cos(0.01f * float(i));
    sin_table[i] = std::sin(0.01f * float(i));
  }
  for (auto _ : state) {
    for (const int direction : {+1, -1})
      k->rope_apply(qkv.data(), cos_table.data(), sin_table.data(), kTokens, kTokens, width, kHeads + kKvHeads,
                    kHeadDim, direction);
    benchmark::DoNotOptimize(qkv.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * (kHeads + kKvHeads) * kHeadDim);
}

// Attention's forward softmax over every causal tile of one head (36 tiles of 128 x 128; the diagonal ones
// masked); the scores are left as the previous pass made them, which costs the same (the exp is branch-free).
void attention_forward(benchmark::State& state, const ElementwiseKernels* k) {
  AlignedFloats scores(kTile * kTile, 2.0f), o(kTokens * kHeadDim, 1.0f);
  std::vector<float> m(kTile), l(kTile);
  const float scale = 1.0f / std::sqrt(float(kHeadDim));
  std::int64_t tiles = 0;
  for (auto _ : state) {
    std::fill(o.data(), o.data() + kTokens * kHeadDim, 1.0f);
    for (std::int64_t qs = 0; qs < kTokens; qs += kTile) {
      std::fill(m.begin(), m.end(), -INFINITY);
      std::fill(l.begin(), l.end(), 0.0f);
      for (std::int64_t ks = 0; ks <= qs; ks += kTile, ++tiles)
        k->attention_softmax_tile(scores.data(), m.data(), l.data(), o.data() + qs * kHeadDim, kHeadDim, kTile, kTile,
                                  kHeadDim, scale, qs, ks, ks == qs, nullptr);
    }
    benchmark::DoNotOptimize(o.data());
  }
  state.SetItemsProcessed(tiles * kTile * kTile);
}

// Attention's backward tile kernels (probabilities, then score gradients) over every causal tile of one head.
void attention_backward(benchmark::State& state, const ElementwiseKernels* k) {
  AlignedFloats probs(kTile * kTile, 2.0f), dscores(kTile * kTile, 1.0f);
  const std::vector<float> lse(kTile, 5.0f), delta(kTile, 0.5f);
  const float scale = 1.0f / std::sqrt(float(kHeadDim));
  std::int64_t tiles = 0;
  for (auto _ : state) {
    for (std::int64_t qs = 0; qs < kTokens; qs += kTile)
      for (std::int64_t ks = 0; ks <= qs; ks += kTile, ++tiles) {
        k->attention_probs_tile(probs.data(), lse.data(), kTile, kTile, scale, qs, ks, ks == qs, nullptr);
        k->attention_dscores_tile(dscores.data(), probs.data(), delta.data(), kTile, kTile, scale);
      }
    benchmark::DoNotOptimize(dscores.data());
  }
  state.SetItemsProcessed(tiles * kTile * kTile);
}

// AdamW over the parameters of one `small` block (7.08 M floats).
void adamw(benchmark::State& state, const AdamWKernel* k) {
  const std::int64_t n = 4 * kDim * kDim + 3 * kDim * kHidden;
  AlignedFloats p(n, 0.02f), g(n, 1.0f), m(n, 0.01f), v(n, 1e-4f);
  for (std::int64_t i = 0; i < n; ++i) v[i] = std::abs(v[i]);
  const llmtrain::optim::isa::AdamWCoefficients c{1.0f - 1e-5f, 0.9f, 0.95f, 1e-3f, 0.3f, 1e-8f, 1.0f};
  for (auto _ : state) {
    k->update(p.data(), g.data(), m.data(), v.data(), n, c);
    benchmark::DoNotOptimize(p.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
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
  for (const CpuIsa cpu : {CpuIsa::Sse2, CpuIsa::Avx2, CpuIsa::Avx512}) {
    if (!llmtrain::cpu_runs(cpu)) continue;
    const ElementwiseKernels* v = &llmtrain::model::isa::kernels_for(cpu);
    const std::string isa = v->isa;
    benchmark::RegisterBenchmark(("rmsnorm_fwd_bwd/" + isa).c_str(), rmsnorm, v);
    benchmark::RegisterBenchmark(("swiglu_fwd_bwd/" + isa).c_str(), swiglu, v);
    benchmark::RegisterBenchmark(("cross_entropy/" + isa).c_str(), cross_entropy, v);
    benchmark::RegisterBenchmark(("rope_fwd_bwd/" + isa).c_str(), rope, v);
    benchmark::RegisterBenchmark(("attention_softmax_fwd/" + isa).c_str(), attention_forward, v);
    benchmark::RegisterBenchmark(("attention_probs_dscores_bwd/" + isa).c_str(), attention_backward, v);
    benchmark::RegisterBenchmark(("adamw_block/" + isa).c_str(), adamw, &llmtrain::optim::isa::adamw_for(cpu));
  }
  benchmark::RegisterBenchmark("gemm_qkv/fp32", gemm, llmtrain::model::Precision::Fp32);
  benchmark::RegisterBenchmark("gemm_qkv/bf16", gemm, llmtrain::model::Precision::Bf16);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("BLAS kernels: %s\n", llmtrain::model::blas_kernel_name().c_str());
  return 0;
}
