// Elastic exactly-once: states saved by W ranks continue on W' ranks (any W, W'), with a changed seq_len,
// changed weights or an added dataset, and every token of the epoch is still delivered exactly once.
#include <gtest/gtest.h>

#include "loader_test_util.hpp"

namespace llmtrain::data::testing {
namespace {

// Runs the chain of (world size, steps, seq_len) segments, each resuming from the previous one's states,
// then lets the last segment finish epoch 0, and checks the coverage of epoch 0.
void expect_chain_exactly_once(LoaderOptions o, const std::vector<std::tuple<int, int, std::int64_t>>& chain) {
  Corpus corpus = scan_corpus(o, ByteEncoder());
  Coverage cov;
  std::vector<std::string> states;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    auto [world, steps, seq_len] = chain[i];
    o.seq_len = seq_len;
    World w(o, world, states);
    w.steps(steps, &cov, &corpus);
    for (const auto& r : w.ranks) ASSERT_EQ(r->stats().dropped_spans, 0u);
    if (i + 1 == chain.size()) w.run_through_epoch(0, &cov, &corpus);
    states = w.states();
  }
  cov.expect_exactly(corpus, 0);
}

LoaderOptions options() { return small_options({{"licenses", license_corpus(), 1.0, "text"}}); }

TEST(LoaderRescale, FourToOne) { expect_chain_exactly_once(options(), {{4, 30, 63}, {1, 20, 63}}); }
TEST(LoaderRescale, FourToThree) { expect_chain_exactly_once(options(), {{4, 30, 63}, {3, 20, 63}}); }
TEST(LoaderRescale, ThreeToSevenToTwo) {
  expect_chain_exactly_once(options(), {{3, 25, 63}, {7, 15, 63}, {2, 10, 63}});
}
TEST(LoaderRescale, FourToTwoSixTwelve) {
  for (int w : {2, 6, 12}) expect_chain_exactly_once(options(), {{4, 25, 63}, {w, 10, 63}});
}
TEST(LoaderRescale, SeqLenChangesLoseNoToken) {
  expect_chain_exactly_once(options(), {{2, 30, 63}, {2, 20, 100}, {3, 20, 20}, {3, 5, 20}});
}

// Random chains: world size, seq_len, shuffle window and prefetching all change at every resume.
TEST(LoaderRescale, RandomChainsAreExactlyOnce) {
  std::uint64_t rng = 2024;
  auto next = [&](std::uint64_t n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
  };
  for (int chain = 0; chain < 6; ++chain) {
    SCOPED_TRACE("chain " + std::to_string(chain));
    LoaderOptions o = options();
    Corpus corpus = scan_corpus(o, ByteEncoder());
    Coverage cov;
    std::vector<std::string> states;
    const int links = 2 + static_cast<int>(next(4));
    for (int link = 0; link < links; ++link) {
      o.seq_len = std::vector<std::int64_t>{17, 63, 100}[next(3)];
      o.shuffle_window = std::vector<std::int64_t>{1, 8, 20}[next(3)];
      o.prefetch_rows = std::vector<std::int64_t>{0, 8}[next(2)];
      World w(o, 1 + static_cast<int>(next(9)), states);
      w.steps(1 + static_cast<int>(next(25)), &cov, &corpus);
      if (link + 1 == links) w.run_through_epoch(0, &cov, &corpus);
      states = w.states();
    }
    cov.expect_exactly(corpus, 0);
  }
}

// Random chains over two datasets whose weights and order change at every resume.
TEST(LoaderRescale, RandomChainsWithChangingWeightsAreExactlyOnce) {
  TempDir dir("random-mix");
  write_generated_corpus(dir / "a", 2, 80, 25);
  write_generated_corpus(dir / "b", 3, 50, 40);
  std::uint64_t rng = 7;
  auto next = [&](std::uint64_t n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
  };
  for (int chain = 0; chain < 4; ++chain) {
    SCOPED_TRACE("chain " + std::to_string(chain));
    LoaderOptions o = small_options({{"a", dir / "a", 1.0, "text"}, {"b", dir / "b", 1.0, "text"}});
    Corpus corpus = scan_corpus(o, ByteEncoder());
    Coverage cov;
    std::vector<std::string> states;
    const int links = 2 + static_cast<int>(next(3));
    for (int link = 0; link < links; ++link) {
      o.datasets[0].weight = 0.1 + 0.2 * static_cast<double>(next(5));
      o.datasets[1].weight = 0.1 + 0.2 * static_cast<double>(next(5));
      if (next(2)) std::swap(o.datasets[0], o.datasets[1]);
      o.seq_len = std::vector<std::int64_t>{31, 63}[next(2)];
      World w(o, 1 + static_cast<int>(next(6)), states);
      w.steps(1 + static_cast<int>(next(20)), &cov, &corpus);
      if (link + 1 == links) w.run_through_epoch(0, &cov, &corpus);
      states = w.states();
    }
    cov.expect_exactly(corpus, 0);
  }
}

TEST(LoaderRescale, WeightsChangeAndDatasetAddedNoRevisitAndNewShares) {
  TempDir dir("mix");
  write_generated_corpus(dir / "a", 3, 400, 30);
  write_generated_corpus(dir / "b", 3, 400, 12);
  write_generated_corpus(dir / "c", 2, 400, 20);
  LoaderOptions o = small_options({{"a", dir / "a", 0.5, "text"}, {"b", dir / "b", 0.5, "text"}}, 255);
  o.batch_rows = 4;
  o.logical_shards = 8;
  World before(o, 2);
  Coverage cov;
  LoaderOptions both = o;
  both.datasets.push_back({"c", dir / "c", 1.0, "text"});
  Corpus corpus = scan_corpus(both, ByteEncoder());
  before.steps(20, &cov, &corpus);

  LoaderOptions after_opts = o;
  after_opts.datasets = {{"c", dir / "c", 0.5, "text"}, {"a", dir / "a", 0.2, "text"}, {"b", dir / "b", 0.3, "text"}};
  World after(after_opts, 3, before.states());
  const int steps = 120;
  after.steps(steps, &cov, &corpus);
  // No revisit: within each epoch of each document, no token delivered twice.
  for (const auto& [key, counts] : cov.counts)
    for (int c : counts) ASSERT_LE(c, 1) << std::get<0>(key) << " @" << std::get<1>(key);
  // Shares over the rows after the shuffle window and the handed-over pieces have drained.
  std::map<std::string, double> tokens;
  double total = 0;
  for (std::size_t r = 0; r < after.ranks.size(); ++r)
    for (int s = 10; s < steps; ++s)
      for (const RowProvenance& row : after.provenance[r][static_cast<std::size_t>(s)])
        for (const SpanInfo& span : row.spans) {
          tokens[span.dataset] += span.token_end - span.token_begin;
          total += span.token_end - span.token_begin;
        }
  EXPECT_NEAR(tokens["c"] / total, 0.5, 0.02);
  EXPECT_NEAR(tokens["a"] / total, 0.2, 0.02);
  EXPECT_NEAR(tokens["b"] / total, 0.3, 0.02);
}

TEST(LoaderRescale, RemovedDatasetDropsOnlyItsPendingPieces) {
  TempDir dir("removed");
  write_generated_corpus(dir / "a", 2, 200, 30);
  write_generated_corpus(dir / "b", 2, 200, 30);
  LoaderOptions o = small_options({{"a", dir / "a", 0.5, "text"}, {"b", dir / "b", 0.5, "text"}});
  World before(o, 2);
  before.steps(10);
  LoaderOptions only_a = o;
  only_a.datasets.pop_back();
  World after(only_a, 2, before.states());
  after.steps(10);
  std::uint64_t dropped = 0;
  for (const auto& r : after.ranks) dropped += r->stats().dropped_spans;
  EXPECT_GT(dropped, 0u);
  for (const auto& batches : after.provenance)
    for (const auto& batch : batches)
      for (const auto& row : batch)
        for (const auto& span : row.spans) EXPECT_EQ(span.dataset, "a");
}

}  // namespace
}  // namespace llmtrain::data::testing
