// Finite-difference check (double precision) of the whole decoder's gradient: every parameter of a small
// model, for tied and untied heads, grouped-query attention, document masking, an ignored target, and both
// recompute modes. Also checks that recomputation and chunking change nothing.
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

void check_model(bool tied, Recompute recompute) {
  WholeModel<double> whole(small_config(tied), recompute);
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

TEST(ModelGradcheck, TiedHead) { check_model(true, Recompute::None); }
TEST(ModelGradcheck, UntiedHeadRecomputeBlocks) { check_model(false, Recompute::Blocks); }

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
