// Incremental decoding (decoder.hpp) against the full-sequence forward pass: for prompts of different
// lengths decoded together, the logits of the prefill and of every cached step equal Model::logits of the
// whole sequence at that position, in fp32, for grouped-query and multi-head attention, tied and untied
// heads. Tolerance: 1e-5 absolute on logits of magnitude ~1 (measured: at most 1.2e-6). The step sums its
// keys in one tile, training in tiles of up to 128, so the bits may differ; a rotation one position off fails.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/decoder.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"

namespace llmtrain::model {
namespace {

constexpr double kTolerance = 1e-5;

ModelConfig decode_config(bool tied, std::int64_t kv_heads) {
  ModelConfig c;
  c.vocab_size = 97;
  c.d_model = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = kv_heads;
  c.d_ff = 48;
  c.max_seq_len = 40;
  c.tie_embeddings = tied;
  c.init_std = 0.2;  // large enough that attention is far from uniform
  c.seed = 7;
  return c;
}

// Logits [vocab] of the sequence's last token, from the full forward pass.
std::vector<float> full_last_logits(Model<float>& model, const std::vector<TokenId>& sequence) {
  Batch b;
  b.rows = 1;
  b.seq_len = std::int64_t(sequence.size());
  b.tokens = sequence;
  b.tokens.push_back(0);
  const std::vector<float> all = model.logits(b);
  const auto V = std::size_t(model.config().vocab_size);
  return std::vector<float>(all.end() - std::ptrdiff_t(V), all.end());
}

double max_diff(const float* a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
  return worst;
}

struct Shape {
  bool tied;
  std::int64_t kv_heads;
};

class DecoderTest : public ::testing::TestWithParam<Shape> {};

TEST_P(DecoderTest, StepsMatchFullSequenceLogits) {
  const ModelConfig config = decode_config(GetParam().tied, GetParam().kv_heads);
  LocalUnits<float> units(config);
  Model<float> model(config, Recompute::Blocks, units);
  Model<float> reference(config, Recompute::None, units);
  const auto V = std::size_t(config.vocab_size);
  std::vector<std::vector<TokenId>> sequences = {{5, 17, 3, 88, 41, 2, 9}, {60}, {11, 12, 13, 70}};
  Decoder<float> decoder(model, 4, config.max_seq_len);
  std::vector<float> logits = decoder.prefill(sequences);
  ASSERT_EQ(logits.size(), sequences.size() * V);
  for (int step = 0; step < 12; ++step) {
    std::vector<TokenId> next;
    for (std::size_t r = 0; r < sequences.size(); ++r) {
      const double diff = max_diff(logits.data() + r * V, full_last_logits(reference, sequences[r]));
      EXPECT_LT(diff, kTolerance) << "prompt " << r << " at length " << sequences[r].size();
      next.push_back(TokenId((sequences[r].size() * 31 + r * 7 + std::size_t(step)) % V));  // any tokens
      sequences[r].push_back(next.back());
    }
    logits = decoder.step(next);
    for (std::size_t r = 0; r < sequences.size(); ++r)
      EXPECT_EQ(decoder.length(std::int64_t(r)), std::int64_t(sequences[r].size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, DecoderTest,
                         ::testing::Values(Shape{true, 2}, Shape{false, 2}, Shape{true, 4}, Shape{false, 1}),
                         [](const auto& info) {
                           return std::string(info.param.tied ? "tied" : "untied") + "_kv" +
                                  std::to_string(info.param.kv_heads);
                         });

// A full cache, a prompt longer than it and a step before any prefill are errors, not silent truncation.
TEST(Decoder, RefusesWhatDoesNotFit) {
  const ModelConfig config = decode_config(true, 2);
  LocalUnits<float> units(config);
  Model<float> model(config, Recompute::Blocks, units);
  Decoder<float> decoder(model, 1, 4);
  EXPECT_THROW(decoder.step({1}), Error);
  EXPECT_THROW(decoder.prefill({{1, 2, 3, 4}}), Error);
  EXPECT_THROW(decoder.prefill({{}}), Error);
  decoder.prefill({{1, 2, 3}});
  decoder.step({4});
  EXPECT_THROW(decoder.step({5}), Error);
  EXPECT_THROW(Decoder<float>(model, 1, config.max_seq_len + 1), Error);
}

}  // namespace
}  // namespace llmtrain::model
