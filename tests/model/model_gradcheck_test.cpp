// Finite-difference check (double precision) of the whole decoder's gradient: every parameter of a small
// model, for tied and untied heads, grouped-query attention, document masking, an ignored target, both
// recompute modes, and Granite's multipliers with Llama 3's rotary remapping. Also checks that
// recomputation and chunking change nothing.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "small_model.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"

namespace llmtrain::model {
namespace {

// A model over whole units in this process.
template <typename T>
struct WholeModel {
  explicit WholeModel(const ModelConfig& config, Recompute recompute = Recompute::None)
      : units(config), model(config, recompute, units) {}
  LocalUnits<T> units;
  Model<T> model;
};

// Granite's four scalings away from 1, and Llama 3's rotary remapping with parameters under which one of
// the two frequencies (head_dim 4) is stretched and the other blended (rope_theta 100: wavelengths 2 pi and
// 20 pi, against original / high = 16 and original / low = 64).
ModelConfig granite_config(bool tied) {
  ModelConfig c = small_config(tied);
  c.embedding_multiplier = 1.7;
  c.residual_multiplier = 0.6;
  c.attention_multiplier = 0.3;
  c.logits_scaling = 1.9;
  c.rope_type = "llama3";
  c.rope_theta = 100;
  c.rope_factor = 4;
  c.rope_low_freq_factor = 1;
  c.rope_high_freq_factor = 4;
  c.rope_original_max_position_embeddings = 64;
  return c;
}

void check_model(const ModelConfig& config, Recompute recompute) {
  WholeModel<double> whole(config, recompute);
  auto& model = whole.model;
  const auto batch = small_batch();
  whole.units.zero_grads();
  const double loss0 = model.forward_backward(batch, 1.0).mean();
  EXPECT_NEAR(model.forward(batch).mean(), loss0, 1e-14);
  for (std::size_t u = 0; u < whole.units.params().size(); ++u) {
    auto& p = whole.units.params()[u];
    const auto& g = whole.units.grads()[u];
    std::vector<double> analytic(g.flat.data(), g.flat.data() + g.flat.size());
    llmtrain::testing::expect_gradient(p.layout.name, p.flat.data(), p.flat.size(),
                                       [&] { return model.forward(batch).mean(); }, analytic, 1e-5, 1e-6);
  }
}

TEST(ModelGradcheck, TiedHead) { check_model(small_config(true), Recompute::None); }
TEST(ModelGradcheck, UntiedHeadRecomputeBlocks) { check_model(small_config(false), Recompute::Blocks); }
TEST(ModelGradcheck, GraniteMultipliersLlama3RopeUntied) { check_model(granite_config(false), Recompute::None); }
TEST(ModelGradcheck, GraniteMultipliersLlama3RopeTiedRecompute) { check_model(granite_config(true), Recompute::Blocks); }

// Each setting reaches the computation: logits_scaling 2 halves the logits exactly (a power of two), and
// each of the others changes them.
TEST(ModelGradcheck, GraniteSettingsChangeTheLogits) {
  const auto batch = small_batch();
  WholeModel<float> base(small_config(false));
  const std::vector<float> reference = base.model.logits(batch);
  ModelConfig halved = small_config(false);
  halved.logits_scaling = 2;
  WholeModel<float> h(halved);
  const std::vector<float> half = h.model.logits(batch);
  for (std::size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(half[i], reference[i] / 2) << i;
  const auto differs = [&](void (*change)(ModelConfig&)) {
    ModelConfig c = small_config(false);
    change(c);
    WholeModel<float> m(c);
    return m.model.logits(batch) != reference;
  };
  EXPECT_TRUE(differs([](ModelConfig& c) { c.embedding_multiplier = 2; }));
  EXPECT_TRUE(differs([](ModelConfig& c) { c.residual_multiplier = 0.5; }));
  EXPECT_TRUE(differs([](ModelConfig& c) { c.attention_multiplier = 0.1; }));
  EXPECT_TRUE(differs([](ModelConfig& c) { c.rope_type = "llama3", c.rope_original_max_position_embeddings = 4; }));
}

// Llama 3.2's published parameters (rope_theta 500000, head_dim 64, factor 32, low 1, high 4, original
// 8192): the first frequencies are kept, the last ones divided by 32, and those between lie between.
TEST(ModelGradcheck, Llama3RopeFrequencies) {
  ModelConfig c;
  c.d_model = 2048, c.n_heads = 32, c.n_kv_heads = 8, c.rope_theta = 500000;
  const std::vector<double> plain = c.rope_inverse_frequencies();
  c.rope_type = "llama3", c.rope_factor = 32;
  const std::vector<double> mapped = c.rope_inverse_frequencies();
  ASSERT_EQ(mapped.size(), 32u);
  EXPECT_EQ(mapped[0], plain[0]);
  EXPECT_DOUBLE_EQ(mapped[31], plain[31] / 32);
  int blended = 0;
  for (std::size_t k = 0; k < mapped.size(); ++k) {
    EXPECT_LE(mapped[k], plain[k]);
    EXPECT_GE(mapped[k], plain[k] / 32 * (1 - 1e-15));
    blended += mapped[k] < plain[k] && mapped[k] > plain[k] / 32 * (1 + 1e-12);
  }
  EXPECT_GT(blended, 0);
  c.rope_type = "yarn";
  EXPECT_THROW(c.validate(), Error);
}

TEST(ModelGradcheck, RecomputeGivesBitwiseIdenticalGradients) {
  WholeModel<float> plain(small_config(false), Recompute::None), recomputed(small_config(false), Recompute::Blocks);
  const auto batch = small_batch();
  EXPECT_EQ(plain.model.forward_backward(batch, 1.0).sum, recomputed.model.forward_backward(batch, 1.0).sum);
  for (std::size_t u = 0; u < plain.units.grads().size(); ++u) {
    const auto& a = plain.units.grads()[u].flat;
    const auto& b = recomputed.units.grads()[u].flat;
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a(i), b(i)) << plain.units.grads()[u].layout.name << " " << i;
  }
}

TEST(ModelGradcheck, AccumulationAddsScaledGradients) {
  WholeModel<double> whole(small_config(true));
  const auto batch = small_batch();
  const auto& grad = whole.units.grads()[1].flat;
  whole.model.forward_backward(batch, 1.0);
  std::vector<double> once(grad.data(), grad.data() + grad.size());
  whole.units.zero_grads();
  whole.model.forward_backward(batch, 0.5);
  whole.model.forward_backward(batch, 0.5);
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(grad(i), once[i], 1e-13);
}

TEST(ModelGradcheck, RejectsBadBatches) {
  WholeModel<float> whole(small_config(true));
  auto& model = whole.model;
  auto batch = small_batch();
  batch.tokens[3] = 11;  // outside the vocabulary
  EXPECT_THROW(model.forward(batch), Error);
  batch = small_batch();
  batch.tokens.pop_back();
  EXPECT_THROW(model.forward(batch), Error);
  batch = small_batch();
  batch.seq_len = 9;
  EXPECT_THROW(model.forward(batch), Error);
  ModelConfig bad = small_config(true);
  bad.n_kv_heads = 3;
  EXPECT_THROW(WholeModel<float>{bad}, Error);
  EXPECT_THROW(parse_recompute("some"), Error);
}

}  // namespace
}  // namespace llmtrain::model
