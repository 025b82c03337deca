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
  AdamW adamw(layouts, options);
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

TEST(GradClip, ScalesOnlyAboveTheLimit) {
  const auto layouts = two_tensor_layout();
  auto grads = model::allocate_units<float>(layouts, "g");
  grads[0].flat(0) = 3.0f;
  grads[0].flat(1) = 4.0f;
  EXPECT_DOUBLE_EQ(clip_by_global_norm(grads, 10.0), 5.0);
  EXPECT_EQ(grads[0].flat(1), 4.0f);
  EXPECT_DOUBLE_EQ(clip_by_global_norm(grads, 1.0), 5.0);
  EXPECT_NEAR(global_norm(grads), 1.0, 1e-6);
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

}  // namespace
}  // namespace llmtrain::optim
