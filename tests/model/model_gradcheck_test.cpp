// Finite-difference check (double precision) of the whole decoder's gradient: every parameter of a small
// model, for tied and untied heads, grouped-query attention, document masking, an ignored target, and both
// recompute modes. Also checks that recomputation and chunking change nothing.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/model/model.hpp"

namespace llmtrain::model {
namespace {

ModelConfig small_config(bool tied) {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.d_ff = 12;
  c.max_seq_len = 8;
  c.tie_embeddings = tied;
  c.mask_documents = true;
  c.init_std = 0.3;  // large weights so that every path carries a visible gradient
  return c;
}

Batch small_batch() {
  Batch b;
  b.rows = 2;
  b.seq_len = 6;
  b.tokens = {1, 4, 7, 2, 9, 3, 5, /**/ 0, 10, 6, 8, 2, 4, -1};  // one ignored target
  b.doc_index = {0, 0, 0, 1, 1, 1, 1, /**/ 0, 0, 1, 1, 1, 2, 2};
  return b;
}

void check_model(bool tied, Recompute recompute) {
  Model<double> model(small_config(tied), recompute);
  const auto batch = small_batch();
  model.zero_grads();
  const double loss0 = model.forward_backward(batch, 1.0).mean();
  EXPECT_NEAR(model.forward(batch).mean(), loss0, 1e-14);
  for (std::size_t u = 0; u < model.params().size(); ++u) {
    auto& p = model.params()[u];
    const auto& g = model.grads()[u];
    std::vector<double> analytic(g.flat.data(), g.flat.data() + g.flat.size());
    llmtrain::testing::expect_gradient(p.layout.name, p.flat.data(), p.flat.size(),
                                       [&] { return model.forward(batch).mean(); }, analytic, 1e-5, 1e-6);
  }
}

TEST(ModelGradcheck, TiedHead) { check_model(true, Recompute::None); }
TEST(ModelGradcheck, UntiedHeadRecomputeBlocks) { check_model(false, Recompute::Blocks); }

TEST(ModelGradcheck, RecomputeGivesBitwiseIdenticalGradients) {
  Model<float> plain(small_config(false), Recompute::None), recomputed(small_config(false), Recompute::Blocks);
  const auto batch = small_batch();
  plain.zero_grads();
  recomputed.zero_grads();
  EXPECT_EQ(plain.forward_backward(batch, 1.0).sum, recomputed.forward_backward(batch, 1.0).sum);
  for (std::size_t u = 0; u < plain.grads().size(); ++u) {
    const auto& a = plain.grads()[u].flat;
    const auto& b = recomputed.grads()[u].flat;
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a(i), b(i)) << plain.grads()[u].layout.name << " " << i;
  }
}

TEST(ModelGradcheck, AccumulationAddsScaledGradients) {
  Model<double> model(small_config(true));
  const auto batch = small_batch();
  model.zero_grads();
  model.forward_backward(batch, 1.0);
  std::vector<double> once(model.grads()[1].flat.data(), model.grads()[1].flat.data() + model.grads()[1].flat.size());
  model.zero_grads();
  model.forward_backward(batch, 0.5);
  model.forward_backward(batch, 0.5);
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(model.grads()[1].flat(i), once[i], 1e-13);
}

TEST(ModelGradcheck, RejectsBadBatches) {
  Model<float> model(small_config(true));
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
  EXPECT_THROW(Model<float>{bad}, Error);
  EXPECT_THROW(parse_recompute("some"), Error);
}

}  // namespace
}  // namespace llmtrain::model
