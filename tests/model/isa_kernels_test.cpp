// Each instruction-set variant of the host float kernels (src/model/isa/) against the baseline (SSE2)
// variant: bitwise equal outputs (the variants share their loops and are built without FMA contraction),
// and one variant against double precision (the Kokkos kernels and row functions of ops.hpp, or std::exp)
// within float tolerance. Variants
// the CPU cannot run are not called (the test says which ran).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../random_floats.hpp"
#include "isa/kernels.hpp"
#include "ops.hpp"

namespace llmtrain::model {
namespace {

using isa::ElementwiseKernels;

std::vector<const ElementwiseKernels*> runnable_variants() {
  std::vector<const ElementwiseKernels*> out;
  for (const CpuIsa cpu : {CpuIsa::Avx2, CpuIsa::Avx512})
    if (cpu_runs(cpu)) out.push_back(&isa::kernels_for(cpu));
  return out;
}

using testing::random_floats;

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

TEST(IsaKernels, RopeAndItsInverse) {
  // 6 rows of 2 sequences of 3 positions; 3 rotated heads of 22 (half 11) in rows 5 heads wide.
  const std::int64_t rows = 6, seq = 3, hd = 22, half = hd / 2, heads = 3, width = 5 * hd;
  const auto qk = random_floats(rows * width, 8, 1.0f);
  std::vector<float> cos_table(seq * half), sin_table(seq * half);
  for (std::int64_t pos = 0; pos < seq; ++pos)
    for (std::int64_t k = 0; k < half; ++k) {
      const float angle = float(pos) * std::pow(0.7f, float(k));
      cos_table[pos * half + k] = std::cos(angle);
      sin_table[pos * half + k] = std::sin(angle);
    }
  for (const int direction : {+1, -1})
    expect_same_bits_as_baseline("rope", {qk}, [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& o) {
      k.rope_apply(o[0].data(), cos_table.data(), sin_table.data(), rows, seq, width, heads, hd, direction);
    });
  std::vector<float> v = qk;
  isa::kernels().rope_apply(v.data(), cos_table.data(), sin_table.data(), rows, seq, width, heads, hd, +1);
  std::vector<double> vd(qk.begin(), qk.end()), cd(cos_table.begin(), cos_table.end()),
      sd(sin_table.begin(), sin_table.end());
  ops::rope_apply(vd.data(), cd.data(), sd.data(), rows, seq, width, heads, hd, +1);
  std::int64_t moved = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(v[i], vd[i], 1e-6 * (1 + std::abs(vd[i])));
    moved += v[i] != qk[i];
  }
  EXPECT_GT(moved, rows * heads * hd / 2);  // position 0 does not move; the others do
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = heads * hd; j < width; ++j) EXPECT_EQ(v[r * width + j], qk[r * width + j]);  // values
  isa::kernels().rope_apply(v.data(), cos_table.data(), sin_table.data(), rows, seq, width, heads, hd, -1);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], qk[i], 1e-6);
}

// A tile of 5 queries (positions 40-44) by 37 keys (0-36): queries 40 and 41 share document 0 with every key
// and carry a running max and sum from earlier tiles; queries 42-44 (document 1) see no key yet.
constexpr std::int64_t kTq = 5, kTk = 37, kHd = 19, kLdo = 23, kQs = 40, kKs = 0;

std::vector<std::int32_t> tile_docs() {
  std::vector<std::int32_t> doc(kQs + kTq);
  for (std::size_t p = 0; p < doc.size(); ++p) doc[p] = p < 42 ? 0 : 1;
  return doc;
}

TEST(IsaKernels, AttentionSoftmaxTileForward) {
  const auto doc = tile_docs();
  const float scale = 1.0f / std::sqrt(float(kHd));
  const auto scores = random_floats(kTq * kTk, 9, 4.0f), o = random_floats(kTq * kLdo, 10, 1.0f);
  std::vector<float> m = {1.5f, 30.0f, -INFINITY, -INFINITY, -INFINITY}, l = {2.0f, 3.0f, 0.0f, 0.0f, 0.0f};
  for (const bool masked : {true, false})
    expect_same_bits_as_baseline("attention_softmax_tile", {scores, m, l, o},
                                 [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& out) {
                                   k.attention_softmax_tile(out[0].data(), out[1].data(), out[2].data(), out[3].data(),
                                                            kLdo, kTq, kTk, kHd, scale, kQs, kKs, masked,
                                                            masked ? doc.data() : nullptr);
                                 });
  auto s = scores, mf = m, lf = l, of = o;
  isa::kernels().attention_softmax_tile(s.data(), mf.data(), lf.data(), of.data(), kLdo, kTq, kTk, kHd, scale, kQs, kKs,
                                        true, doc.data());
  for (std::int64_t i = 0; i < kTq; ++i) {
    std::vector<double> sd(scores.begin() + i * kTk, scores.begin() + (i + 1) * kTk),
        od(o.begin() + i * kLdo, o.begin() + (i + 1) * kLdo);
    double md = m[i], ld = l[i];
    ops::attention_softmax_row(sd.data(), &md, &ld, od.data(), kTk, kHd, double(scale), kQs + i, kKs, true, doc.data());
    if (i < 2) {  // rows 2-4 stay -inf, checked below
      EXPECT_NEAR(mf[i], md, 1e-6 * std::abs(md)) << "row " << i;
    }
    EXPECT_NEAR(lf[i], ld, 1e-5 * ld) << "row " << i;
    for (std::int64_t j = 0; j < kTk; ++j) EXPECT_NEAR(s[i * kTk + j], sd[j], 1e-5 * (1 + sd[j])) << i << "," << j;
    for (std::int64_t d = 0; d < kLdo; ++d) EXPECT_NEAR(of[i * kLdo + d], od[d], 1e-6 * (1 + std::abs(od[d])));
  }
  // Row 1's running max (30) stays; rows without a visible key keep -inf, a zero sum, zero scores, o as it was.
  EXPECT_EQ(mf[1], 30.0f);
  for (std::int64_t i = 2; i < kTq; ++i) {
    EXPECT_EQ(mf[i], -INFINITY);
    EXPECT_EQ(lf[i], 0.0f);
    for (std::int64_t j = 0; j < kTk; ++j) EXPECT_EQ(s[i * kTk + j], 0.0f);
    for (std::int64_t d = 0; d < kLdo; ++d) EXPECT_EQ(of[i * kLdo + d], o[i * kLdo + d]);
  }
}

TEST(IsaKernels, AttentionTilesBackward) {
  const auto doc = tile_docs();
  const float scale = 1.0f / std::sqrt(float(kHd));
  const auto scores = random_floats(kTq * kTk, 11, 4.0f), dp = random_floats(kTq * kTk, 12, 1.0f);
  const std::vector<float> lse = {3.0f, 2.5f, 4.0f, 1.0f, 2.0f}, delta = {0.1f, -0.2f, 0.3f, 0.0f, 1.5f};
  for (const bool masked : {true, false})
    expect_same_bits_as_baseline("attention_probs_tile, attention_dscores_tile", {scores, dp},
                                 [&](const ElementwiseKernels& k, std::vector<std::vector<float>>& out) {
                                   k.attention_probs_tile(out[0].data(), lse.data(), kTq, kTk, scale, kQs, kKs, masked,
                                                          masked ? doc.data() : nullptr);
                                   k.attention_dscores_tile(out[1].data(), out[0].data(), delta.data(), kTq, kTk, scale);
                                 });
  auto p = scores, ds = dp;
  isa::kernels().attention_probs_tile(p.data(), lse.data(), kTq, kTk, scale, kQs, kKs, true, doc.data());
  isa::kernels().attention_dscores_tile(ds.data(), p.data(), delta.data(), kTq, kTk, scale);
  for (std::int64_t i = 0; i < kTq; ++i)
    for (std::int64_t j = 0; j < kTk; ++j) {
      const bool visible = i < 2;  // see tile_docs
      const double pd = visible ? std::exp(double(scores[i * kTk + j]) * scale - lse[i]) : 0.0;
      EXPECT_NEAR(p[i * kTk + j], pd, 2e-6 * (1 + pd)) << i << "," << j;
      EXPECT_NEAR(ds[i * kTk + j], pd * (dp[i * kTk + j] - delta[i]) * scale, 1e-5 * (1 + pd)) << i << "," << j;
    }
}

TEST(IsaKernels, ChosenVariantIsTheWidestRunnable) {
  const auto variants = runnable_variants();
  const char* widest = variants.empty() ? "sse2" : variants.back()->isa;
  EXPECT_STREQ(isa::kernels().isa, widest);
  std::printf("variants run here: sse2");
  for (const auto* v : variants) std::printf(", %s", v->isa);
  std::printf("; chosen: %s\n", isa::kernels().isa);
  // The table of variants is in CpuIsa's order: each ISA gets the variant built for it.
  for (const CpuIsa cpu : {CpuIsa::Sse2, CpuIsa::Avx2, CpuIsa::Avx512})
    if (cpu_runs(cpu)) {
      EXPECT_STREQ(isa::kernels_for(cpu).isa, cpu_isa_name(cpu));
    }
}

}  // namespace
}  // namespace llmtrain::model
