// Each instruction-set variant of AdamW's update (src/optim/isa/) against the baseline (SSE2) variant:
// bitwise equal (same loop, no FMA contraction); AdamW::step, which dispatches to the widest variant, gives
// the baseline's bits; the update against a double-precision evaluation of torch's formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../random_floats.hpp"
#include "isa/adamw_kernels.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/optim/adamw.hpp"

namespace llmtrain::optim {
namespace {

using isa::AdamWCoefficients;
using isa::AdamWKernel;

using testing::random_floats;

// A third step at lr 1e-3 with weight decay 0.1, gradients clipped by 0.5 (AdamW::step's formulas).
AdamWCoefficients third_step() {
  AdamWCoefficients c{};
  c.step_size = float(1e-3 / (1.0 - std::pow(0.9, 3.0)));
  c.bias2_sqrt = float(std::sqrt(1.0 - std::pow(0.95, 3.0)));
  c.beta1 = 0.9f;
  c.beta2 = 0.95f;
  c.eps = 1e-8f;
  c.clip = 0.5f;
  c.keep = float(1.0 - 1e-3 * 0.1);
  return c;
}

constexpr std::int64_t kN = 1003;  // not a multiple of any vector length

struct State {
  std::vector<float> p, m, v;
};

State start() {
  State s{random_floats(kN, 1, 0.02f), random_floats(kN, 2, 0.01f), random_floats(kN, 3, 1e-4f)};
  for (auto& x : s.v) x = std::abs(x);
  s.v[5] = 0;  // a fresh second moment: the update divides by eps alone
  return s;
}

TEST(AdamWIsa, VariantsGiveTheBaselineBits) {
  const auto g = random_floats(kN, 4, 1.0f);
  const AdamWCoefficients c = third_step();
  State base = start();
  isa::adamw_sse2().update(base.p.data(), g.data(), base.m.data(), base.v.data(), kN, c);
  int ran = 0;
  for (const CpuIsa cpu : {CpuIsa::Avx2, CpuIsa::Avx512}) {
    if (!cpu_runs(cpu)) continue;
    ++ran;
    const AdamWKernel& k = isa::adamw_for(cpu);
    EXPECT_STREQ(k.isa, cpu_isa_name(cpu)) << "the table of variants is not in CpuIsa's order";
    State s = start();
    k.update(s.p.data(), g.data(), s.m.data(), s.v.data(), kN, c);
    EXPECT_EQ(std::memcmp(s.p.data(), base.p.data(), kN * sizeof(float)), 0) << k.isa << ": parameters differ";
    EXPECT_EQ(std::memcmp(s.m.data(), base.m.data(), kN * sizeof(float)), 0) << k.isa << ": first moments differ";
    EXPECT_EQ(std::memcmp(s.v.data(), base.v.data(), kN * sizeof(float)), 0) << k.isa << ": second moments differ";
  }
  std::printf("variants compared with sse2: %d; chosen: %s\n", ran, isa::adamw_kernel().isa);
  EXPECT_STREQ(isa::adamw_kernel().isa, cpu_isa_name(widest_cpu_isa()));
}

TEST(AdamWIsa, UpdateMatchesTorchFormulaInDouble) {
  const auto g = random_floats(kN, 5, 1.0f);
  const AdamWCoefficients c = third_step();
  const State s0 = start();
  State s = s0;
  isa::adamw_kernel().update(s.p.data(), g.data(), s.m.data(), s.v.data(), kN, c);
  // The float coefficients in double (1 - beta is exact in float too); tolerances are relative to the terms.
  const double b1 = c.beta1, b2 = c.beta2;
  for (std::int64_t i = 0; i < kN; ++i) {
    const double gi = double(g[i]) * c.clip;
    const double m = b1 * s0.m[i] + (1 - b1) * gi, v = b2 * s0.v[i] + (1 - b2) * gi * gi;
    const double update = double(c.step_size) * m / (std::sqrt(v) / c.bias2_sqrt + c.eps);
    const double p = s0.p[i] * double(c.keep) - update;
    EXPECT_NEAR(s.m[i], m, 1e-6 * (std::abs(s0.m[i]) + std::abs(gi))) << i;
    EXPECT_NEAR(s.v[i], v, 1e-6 * (s0.v[i] + gi * gi)) << i;
    EXPECT_NEAR(s.p[i], p, 1e-6 * (std::abs(s0.p[i]) + std::abs(update))) << i;
  }
}

// AdamW::step on a unit whose tensors decay and do not, against the baseline loop applied per tensor.
TEST(AdamWIsa, StepDispatchesWithTheBaselineBits) {
  model::UnitLayout unit{"block.0", {}};
  unit.tensors.push_back(model::TensorSlice{"attn_norm", 0, {kN / 3}, true});
  unit.tensors.push_back(model::TensorSlice{"wq", kN / 3, {kN - kN / 3}, false});
  auto params = model::allocate_units<float>({unit}, "p");
  auto grads = model::allocate_units<float>({unit}, "g");
  const State s0 = start();
  const auto g = random_floats(kN, 6, 1.0f);
  std::memcpy(params[0].flat.data(), s0.p.data(), kN * sizeof(float));
  std::memcpy(grads[0].flat.data(), g.data(), kN * sizeof(float));
  AdamW adamw(params, AdamWOptions{});
  adamw.step(params, grads, 1e-3, 0.5);

  State ref{s0.p, std::vector<float>(kN), std::vector<float>(kN)};
  AdamWCoefficients c{};
  c.step_size = float(1e-3 / (1.0 - 0.9));
  c.bias2_sqrt = float(std::sqrt(1.0 - 0.95));
  c.beta1 = 0.9f;
  c.beta2 = 0.95f;
  c.eps = 1e-8f;
  c.clip = 0.5f;
  c.keep = 1.0f;  // the norm weight does not decay
  isa::adamw_sse2().update(ref.p.data(), g.data(), ref.m.data(), ref.v.data(), kN / 3, c);
  c.keep = float(1.0 - 1e-3 * 0.1);
  const std::int64_t o = kN / 3;
  isa::adamw_sse2().update(ref.p.data() + o, g.data() + o, ref.m.data() + o, ref.v.data() + o, kN - o, c);
  EXPECT_EQ(std::memcmp(params[0].flat.data(), ref.p.data(), kN * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(adamw.first_moments()[0].flat.data(), ref.m.data(), kN * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(adamw.second_moments()[0].flat.data(), ref.v.data(), kN * sizeof(float)), 0);
}

}  // namespace
}  // namespace llmtrain::optim
