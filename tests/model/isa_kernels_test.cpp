// Each instruction-set variant of the host float kernels (src/model/isa/) against the baseline (SSE2)
// variant: bitwise equal outputs (the variants share their loops and are built without FMA contraction),
// and the baseline against the double-precision Kokkos kernels of ops.hpp within float tolerance. Variants
// the CPU cannot run are not called (the test says which ran).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "isa/kernels.hpp"
#include "ops.hpp"

namespace llmtrain::model {
namespace {

using isa::ElementwiseKernels;

std::vector<const ElementwiseKernels*> runnable_variants() {
  __builtin_cpu_init();
  std::vector<const ElementwiseKernels*> out;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(&isa::kernels_avx2());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    out.push_back(&isa::kernels_avx512());
  return out;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// Runs `run(kernels, outputs...)` for the baseline and every runnable variant and compares the outputs bitwise.
template <typename Run>
void expect_same_bits_as_baseline(const char* kernel, std::vector<std::vector<float>> start, Run run) {
  auto baseline = start;
  run(isa::kernels_sse2(), baseline);
  for (const ElementwiseKernels* k : runnable_variants()) {
    auto out = start;
    run(*k, out);
    for (std::size_t b = 0; b < out.size(); ++b)
      EXPECT_EQ(std::memcmp(out[b].data(), baseline[b].data(), out[b].size() * sizeof(float)), 0)
          << kernel << ": output " << b << " of the " << k->isa << " variant differs from sse2";
  }
}

// Shapes with rows and widths that are not multiples of any vector length.
constexpr std::int64_t kRows = 7, kDim = 67, kVocab = 1001;

TEST(IsaKernels, RmsNorm) {
  const auto x = random_floats(kRows * kDim, 1, 2.0f), w = random_floats(kDim, 2, 1.0f);
  const auto dout = random_floats(kRows * kDim, 3, 1.0f), dx0 = random_floats(kRows * kDim, 4, 1.0f);
  expect_same_bits_as_baseline("rmsnorm", {std::vector<float>(kRows * kDim), std::vector<float>(kRows), dx0},
                               [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& o) {
                                 k.rmsnorm_forward(o[0].data(), o[1].data(), x.data(), w.data(), kRows, kDim, 1e-5);
                                 k.rmsnorm_backward_dx(o[2].data(), dout.data(), x.data(), w.data(), o[1].data(),
                                                       kRows, kDim);
                               });
  // Baseline against the double kernels.
  std::vector<float> out(kRows * kDim), rstd(kRows), dx = dx0;
  isa::kernels_sse2().rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), kRows, kDim, 1e-5);
  isa::kernels_sse2().rmsnorm_backward_dx(dx.data(), dout.data(), x.data(), w.data(), rstd.data(), kRows, kDim);
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), doutd(dout.begin(), dout.end());
  std::vector<double> outd(kRows * kDim), rstdd(kRows), dxd(dx0.begin(), dx0.end()), dwd(kDim);
  ops::rmsnorm_forward(outd.data(), rstdd.data(), xd.data(), wd.data(), kRows, kDim, 1e-5);
  ops::rmsnorm_backward(dxd.data(), dwd.data(), doutd.data(), xd.data(), wd.data(), rstdd.data(), kRows, kDim);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_NEAR(out[i], outd[i], 1e-5 * (1 + std::abs(outd[i])));
    EXPECT_NEAR(dx[i], dxd[i], 1e-5 * (1 + std::abs(dxd[i])));
  }
}

TEST(IsaKernels, SwiGlu) {
  const std::int64_t hidden = 45;
  const auto h13 = random_floats(kRows * 2 * hidden, 5, 4.0f), dout = random_floats(kRows * hidden, 6, 1.0f);
  expect_same_bits_as_baseline("swiglu", {std::vector<float>(kRows * hidden), std::vector<float>(kRows * 2 * hidden)},
                               [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& o) {
                                 k.swiglu_forward(o[0].data(), h13.data(), kRows, hidden);
                                 k.swiglu_backward(o[1].data(), dout.data(), h13.data(), kRows, hidden);
                               });
  std::vector<float> out(kRows * hidden), dh(kRows * 2 * hidden);
  isa::kernels_sse2().swiglu_forward(out.data(), h13.data(), kRows, hidden);
  isa::kernels_sse2().swiglu_backward(dh.data(), dout.data(), h13.data(), kRows, hidden);
  std::vector<double> h13d(h13.begin(), h13.end()), doutd(dout.begin(), dout.end());
  std::vector<double> outd(out.size()), dhd(dh.size());
  ops::swiglu_forward(outd.data(), h13d.data(), kRows, hidden);
  ops::swiglu_backward(dhd.data(), doutd.data(), h13d.data(), kRows, hidden);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], outd[i], 1e-5 * (1 + std::abs(outd[i])));
  for (std::size_t i = 0; i < dh.size(); ++i) EXPECT_NEAR(dh[i], dhd[i], 1e-5 * (1 + std::abs(dhd[i])));
}

TEST(IsaKernels, CrossEntropy) {
  const auto logits = random_floats(kRows * kVocab, 7, 3.0f);
  std::vector<std::int32_t> targets(kRows);
  for (std::int64_t r = 0; r < kRows; ++r) targets[r] = std::int32_t((r * 397) % kVocab);
  targets[3] = -100;  // ignored row: zero loss and gradient
  for (const bool want_grad : {true, false}) {
    expect_same_bits_as_baseline("cross_entropy", {logits, std::vector<float>(kRows)},
                                 [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& o) {
                                   k.cross_entropy_rows(o[0].data(), o[1].data(), targets.data(), kRows, kVocab, -100,
                                                        0.5f, want_grad);
                                 });
  }
  std::vector<float> z = logits, loss(kRows);
  isa::kernels_sse2().cross_entropy_rows(z.data(), loss.data(), targets.data(), kRows, kVocab, -100, 0.5f, true);
  std::vector<double> zd(logits.begin(), logits.end()), lossd(kRows);
  ops::cross_entropy_rows(zd.data(), lossd.data(), targets.data(), kRows, kVocab, -100, 0.5, true);
  EXPECT_EQ(loss[3], 0.0f);
  for (std::int64_t r = 0; r < kRows; ++r) EXPECT_NEAR(loss[r], lossd[r], 1e-5 * (1 + std::abs(lossd[r])));
  for (std::size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(z[i], zd[i], 1e-6);
}

TEST(IsaKernels, ChosenVariantIsTheWidestRunnable) {
  const auto variants = runnable_variants();
  const char* widest = variants.empty() ? "sse2" : variants.back()->isa;
  EXPECT_STREQ(isa::kernels().isa, widest);
  std::printf("variants run here: sse2");
  for (const auto* v : variants) std::printf(", %s", v->isa);
  std::printf("; chosen: %s\n", isa::kernels().isa);
}

}  // namespace
}  // namespace llmtrain::model
