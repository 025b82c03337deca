// The output head's weight packed once per head pass (ReusedOperandB, owned by the host backend each model
// makes for itself): in bf16 the packed copy gives the bits of packing per chunk, two models in one process
// each get their own copy, and a head changed in place between passes (as the optimizer and the FSDP store's
// re-gathers do, at the same address) is packed afresh. On a CPU without AVX512_BF16 nothing is packed and
// the same must hold.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"

namespace llmtrain::model {
namespace {

constexpr std::int64_t kSeq = 160;  // two rows: 320 positions, two chunks of the head (256 rows each)

ModelConfig head_config(bool tied, std::int64_t seed) {
  ModelConfig c;
  c.vocab_size = 1100;  // several column blocks of the forward product and k blocks of dX's
  c.d_model = 64;
  c.n_layers = 1;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 96;
  c.max_seq_len = kSeq;
  c.tie_embeddings = tied;
  c.seed = seed;
  return c;
}

Batch rows_batch(std::int64_t rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TokenId> token(0, 1099);
  Batch b;
  b.rows = rows;
  b.seq_len = kSeq;
  for (std::int64_t i = 0; i < rows * b.row_width(); ++i) b.tokens.push_back(token(rng));
  return b;
}

Batch one_row(const Batch& b, std::int64_t r) {
  Batch one;
  one.rows = 1;
  one.seq_len = b.seq_len;
  one.tokens.assign(b.row(r), b.row(r) + b.row_width());
  return one;
}

struct Bf16Model {
  explicit Bf16Model(const ModelConfig& config)
      : units(config), model(config, Recompute::None, units, Precision::Bf16) {}
  LocalUnits<float> units;
  Model<float> model;
};

// The logits of each row on its own: 160 positions fit one chunk, so the head's weight is packed inside the
// product as usual, never kept. Our kernel's rows do not depend on the other rows of a product.
std::vector<float> per_row_logits(Model<float>& model, const Batch& b) {
  std::vector<float> all;
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const auto row = model.logits(one_row(b, r));
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

std::vector<float> copy_of(const Kokkos::View<float*>& v) { return std::vector<float>(v.data(), v.data() + v.size()); }

TEST(ReusedHead, TwoModelsInOneProcessEachGetTheirOwnPacking) {
  Bf16Model untied(head_config(false, 1)), tied(head_config(true, 2));
  const Batch batch = rows_batch(2, 3);
  const auto want_untied = per_row_logits(untied.model, batch), want_tied = per_row_logits(tied.model, batch);
  ASSERT_NE(want_untied, want_tied);
  for (int round = 0; round < 2; ++round) {  // interleaved, twice: each model finds its own copies
    SCOPED_TRACE(round);
    EXPECT_EQ(untied.model.logits(batch), want_untied);
    EXPECT_EQ(tied.model.logits(batch), want_tied);
    untied.model.forward_backward(batch, 1.0);
    tied.model.forward_backward(batch, 1.0);
  }
}

TEST(ReusedHead, HeadChangedAtTheSameAddressIsPackedAfresh) {
  for (bool tied : {false, true}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    Bf16Model whole(head_config(tied, 4));
    const Batch batch = rows_batch(2, 5);
    const double before = whole.model.forward_backward(batch, 1.0).sum;  // packs both of the head's products
    // What an optimizer step does: new values in the same buffer.
    auto& head = whole.units.params()[tied ? 0 : 2];
    float* weight = head.data(tied ? "tok_embedding" : "output");
    for (std::int64_t i = 0; i < 1100 * 64; ++i) weight[i] *= 1.5f;
    whole.units.zero_grads();
    const double after = whole.model.forward_backward(batch, 1.0).sum;
    EXPECT_NE(after, before);
    std::vector<std::vector<float>> grads;
    for (const auto& g : whole.units.grads()) grads.push_back(copy_of(g.flat));
    // A model created now has never packed anything: its loss and gradients are the reference, dX's (which
    // reaches every block's gradient) included.
    whole.units.zero_grads();
    Model<float> fresh(head_config(tied, 4), Recompute::None, whole.units, Precision::Bf16);
    EXPECT_EQ(fresh.forward_backward(batch, 1.0).sum, after) << "the old head's packed copy was read";
    for (std::size_t u = 0; u < grads.size(); ++u)
      EXPECT_EQ(copy_of(whole.units.grads()[u].flat), grads[u]) << whole.units.grads()[u].layout.name;
    EXPECT_EQ(whole.model.logits(batch), per_row_logits(fresh, batch));
  }
}

}  // namespace
}  // namespace llmtrain::model
