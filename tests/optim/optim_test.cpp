// AdamW against a hand-computed update, weight-decay exemptions, clipping, and the schedules' shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "llmtrain/core/error.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/optim/grad_clip.hpp"
#include "llmtrain/optim/schedule.hpp"

namespace llmtrain::optim {
namespace {

std::vector<model::UnitLayout> two_tensor_layout() {
  model::UnitLayout unit{"u", {}};
  unit.tensors.push_back(model::TensorSlice{"norm", 0, {1}, true});
  unit.tensors.push_back(model::TensorSlice{"w", 1, {1}, false});
  return {unit};
}

TEST(AdamW, MatchesHandComputedStepsAndSkipsDecayOnNorms) {
  const auto layouts = two_tensor_layout();
  auto params = model::allocate_units<float>(layouts, "p");
  auto grads = model::allocate_units<float>(layouts, "g");
  AdamWOptions options;
  options.weight_decay = 0.1;
  AdamW adamw(params, options);
  params[0].flat(0) = 1.0f;
  params[0].flat(1) = 1.0f;
  double p_norm = 1.0, p_w = 1.0, m = 0, v = 0;
  const double lr = 0.01;
  for (int t = 1; t <= 3; ++t) {
    const double g = 0.5 * t;
    grads[0].flat(0) = float(g);
    grads[0].flat(1) = float(g);
    adamw.step(params, grads, lr);
    m = 0.9 * m + 0.1 * g;
    v = 0.95 * v + 0.05 * g * g;
    const double update = lr * (m / (1 - std::pow(0.9, t))) / (std::sqrt(v / (1 - std::pow(0.95, t))) + 1e-8);
    p_norm -= update;
    p_w = p_w * (1 - lr * 0.1) - update;
    EXPECT_NEAR(params[0].flat(0), p_norm, 1e-6);
    EXPECT_NEAR(params[0].flat(1), p_w, 1e-6);
  }
  EXPECT_EQ(adamw.steps_taken(), 3);
}

// A rank that keeps only elements [begin, end) of a unit (an FSDP shard that cuts a tensor in two) updates
// them exactly as the whole-unit update does, decay flags included.
TEST(AdamW, ShardRangesUpdateLikeTheWholeUnit) {
  model::UnitLayout unit{"u", {model::TensorSlice{"norm", 0, {5}, true}, model::TensorSlice{"w", 5, {3, 4}, false}}};
  auto params = model::allocate_units<float>({unit}, "p");
  auto grads = model::allocate_units<float>({unit}, "g");
  for (int i = 0; i < 17; ++i) {
    params[0].flat(i) = 0.1f * float(i) - 0.5f;
    grads[0].flat(i) = 0.03f * float(i % 5) - 0.05f;
  }
  const std::int64_t begin = 3, end = 11;
  std::vector<model::ParamUnit<float>> shard_params{{unit, Kokkos::View<float*>("sp", end - begin), begin}};
  std::vector<model::ParamUnit<float>> shard_grads{{unit, Kokkos::View<float*>("sg", end - begin), begin}};
  for (std::int64_t i = begin; i < end; ++i) {
    shard_params[0].flat(i - begin) = params[0].flat(i);
    shard_grads[0].flat(i - begin) = grads[0].flat(i);
  }
  AdamW whole(params, AdamWOptions{}), part(shard_params, AdamWOptions{});
  for (int step = 0; step < 3; ++step) {
    whole.step(params, grads, 1e-2, 0.7);
    part.step(shard_params, shard_grads, 1e-2, 0.7);
  }
  for (std::int64_t i = begin; i < end; ++i) EXPECT_EQ(shard_params[0].flat(i - begin), params[0].flat(i)) << i;
  std::vector<model::ParamUnit<float>> moved{{unit, Kokkos::View<float*>("m", end - begin), begin + 1}};
  EXPECT_THROW(part.step(moved, shard_grads, 1e-2), Error);
}

TEST(GradClip, FactorOnlyAboveTheLimit) {
  const auto layouts = two_tensor_layout();
  auto grads = model::allocate_units<float>(layouts, "g");
  grads[0].flat(0) = 3.0f;
  grads[0].flat(1) = 4.0f;
  const double norm = std::sqrt(model::sum_of_squares(grads));
  EXPECT_DOUBLE_EQ(norm, 5.0);
  EXPECT_DOUBLE_EQ(clip_factor(norm, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(clip_factor(norm, 0.0), 1.0);  // disabled
  EXPECT_NEAR(clip_factor(norm, 1.0) * norm, 1.0, 1e-6);
}

TEST(GradClip, NormOfManyBlocksMatchesPlainSum) {
  model::UnitLayout unit{"u", {model::TensorSlice{"w", 0, {10007}, false}}};
  auto grads = model::allocate_units<float>({unit}, "g");
  double expected = 0;
  for (int i = 0; i < 10007; ++i) {
    grads[0].flat(i) = float(i % 13) - 6.0f;
    expected += double(grads[0].flat(i)) * double(grads[0].flat(i));
  }
  EXPECT_DOUBLE_EQ(std::sqrt(model::sum_of_squares(grads)), std::sqrt(expected));
}

TEST(AdamW, GradScaleActsLikeScaledGradients) {
  const auto layouts = two_tensor_layout();
  auto p1 = model::allocate_units<float>(layouts, "p1"), p2 = model::allocate_units<float>(layouts, "p2");
  auto g1 = model::allocate_units<float>(layouts, "g1"), g2 = model::allocate_units<float>(layouts, "g2");
  AdamW a1(p1, AdamWOptions{}), a2(p2, AdamWOptions{});
  for (int t = 0; t < 3; ++t) {
    g1[0].flat(1) = 2.0f * float(t + 1);
    g2[0].flat(1) = float(t + 1);
    a1.step(p1, g1, 0.1, 0.5);
    a2.step(p2, g2, 0.1);
    EXPECT_EQ(p1[0].flat(1), p2[0].flat(1));
  }
}

TEST(Schedule, WarmupThenDecayToMinimum) {
  ScheduleOptions o;
  o.lr = 1.0;
  o.min_lr = 0.1;
  o.warmup_steps = 4;
  o.total_steps = 14;
  EXPECT_DOUBLE_EQ(learning_rate(o, 0), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate(o, 3), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(o, 4), 1.0);
  EXPECT_NEAR(learning_rate(o, 9), 0.55, 1e-12);  // cosine half way
  EXPECT_DOUBLE_EQ(learning_rate(o, 14), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(o, 100), 0.1);
  o.decay = Decay::Linear;
  EXPECT_NEAR(learning_rate(o, 9), 0.55, 1e-12);
  EXPECT_NEAR(learning_rate(o, 6), 0.82, 1e-12);
  o.decay = Decay::Constant;
  EXPECT_DOUBLE_EQ(learning_rate(o, 13), 1.0);
  EXPECT_THROW(parse_decay("exp"), Error);
}

TEST(Schedule, RunShorterThanItsWarmupKeepsRisingAndNeverReachesThePeak) {
  ScheduleOptions longer;
  longer.lr = 1.0;
  longer.min_lr = 0.1;
  longer.warmup_steps = 10;
  longer.total_steps = 100;
  for (const Decay decay : {Decay::Cosine, Decay::Linear, Decay::Constant}) {
    ScheduleOptions trial = longer;
    trial.decay = longer.decay = decay;
    trial.total_steps = 4;
    for (std::int64_t step = 0; step < trial.total_steps; ++step) {
      EXPECT_DOUBLE_EQ(learning_rate(trial, step), 0.1 * double(step + 1));  // the longer run's first steps
      EXPECT_EQ(learning_rate(trial, step), learning_rate(longer, step));
    }
    EXPECT_LT(learning_rate(trial, trial.total_steps - 1), trial.lr);
  }
}

}  // namespace
}  // namespace llmtrain::optim
