// Exactly-once per epoch, new order every epoch, and determinism, on the committed real-text corpus (every
// input format: .jsonl, .jsonl.gz, .jsonl.zst, .txt) and on generated corpora.
#include <gtest/gtest.h>

#include <algorithm>

#include "loader_test_util.hpp"
#include "shards.hpp"

namespace llmtrain::data::testing {
namespace {

LoaderOptions license_options(std::int64_t seq_len = 63) {
  return small_options({{"licenses", license_corpus(), 1.0, "text"}}, seq_len);
}

TEST(LoaderEpochs, RealTextEveryTokenExactlyOncePerEpoch) {
  for (int world : {1, 3}) {
    LoaderOptions o = license_options();
    Corpus corpus = scan_corpus(o, ByteEncoder());
    ASSERT_GT(corpus.docs.size(), 300u);
    std::map<std::string, int> per_format;
    for (const auto& [key, tokens] : corpus.docs)
      ++per_format[key.first.substr(key.first.find_last_of('.'))];
    EXPECT_EQ(per_format[".txt"], 3);
    EXPECT_GT(per_format[".gz"], 5);
    EXPECT_GT(per_format[".zst"], 20);
    EXPECT_GT(per_format[".jsonl"], 150);
    World w(o, world);
    Coverage cov;
    w.run_through_epoch(0, &cov, &corpus);
    cov.expect_exactly(corpus, 0);
    EXPECT_GT(cov.rows, 1000);
  }
}

TEST(LoaderEpochs, TwoEpochsTwiceWithDifferentOrders) {
  LoaderOptions o = license_options();
  Corpus corpus = scan_corpus(o, ByteEncoder());
  World w(o, 2);
  Coverage cov;
  w.run_through_epoch(1, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
  cov.expect_exactly(corpus, 1);
  // BOS + EOS of every document of both epochs, plus those of the epoch-2 documents already begun.
  EXPECT_GE(cov.specials, static_cast<std::int64_t>(4 * corpus.docs.size()));
  // Order of first appearance of documents, per epoch, on rank 0.
  std::vector<std::pair<std::string, std::uint64_t>> order[2];
  std::set<std::tuple<std::string, std::uint64_t, std::uint32_t>> seen;
  for (const auto& batch : w.provenance[0])
    for (const auto& row : batch)
      for (const auto& s : row.spans)
        if (s.epoch < 2 && seen.insert({s.file, s.byte_offset, s.epoch}).second)
          order[s.epoch].push_back({s.file, s.byte_offset});
  ASSERT_GT(order[0].size(), 50u);
  EXPECT_NE(order[0], order[1]);
}

TEST(LoaderEpochs, SameOptionsSameBatches) {
  LoaderOptions o = license_options();
  World a(o, 3), b(o, 3);
  a.steps(40);
  b.steps(40);
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 40; ++s) ASSERT_EQ(a.batches[r][s].tokens, b.batches[r][s].tokens);
  o.seed += 1;
  World c(o, 3);
  c.steps(40);
  EXPECT_NE(a.batches[0][0].tokens, c.batches[0][0].tokens);
}

TEST(LoaderEpochs, ManyFilesManyShardsAnyWorldSize) {
  TempDir dir("many");
  write_generated_corpus(dir.path(), 7, 60, 40);
  LoaderOptions o = small_options({{"gen", dir.path(), 1.0, "text"}}, 31);
  o.logical_shards = 13;
  o.block_bytes = 700;
  Corpus corpus = scan_corpus(o, ByteEncoder());
  for (int world : {1, 5, 13}) {
    World w(o, world);
    Coverage cov;
    w.run_through_epoch(0, &cov, &corpus);
    cov.expect_exactly(corpus, 0);
  }
}

TEST(LoaderEpochs, EachRankReadsOnlyItsOwnShards) {
  LoaderOptions o = license_options();
  DatasetFiles ds = list_dataset(o.datasets[0]);
  const int world = 3;
  World w(o, world);
  w.steps(60);
  for (int r = 0; r < world; ++r)
    for (const auto& batch : w.provenance[static_cast<std::size_t>(r)])
      for (const auto& row : batch)
        for (const auto& span : row.spans) {
          auto file = std::find_if(ds.files.begin(), ds.files.end(), [&](const CorpusFile& f) { return f.path == span.file; });
          ASSERT_NE(file, ds.files.end());
          // Where the record starts in the dataset's byte space (a compressed or text file: where it starts).
          std::uint64_t at = file->start + (splittable(file->format) ? span.byte_offset : 0);
          std::uint64_t shard = 0;
          while (shard_range(ds, 16, shard).end <= at) ++shard;
          EXPECT_TRUE(rank_owns_shard(shard, r, world)) << span.file << " @" << span.byte_offset;
        }
}

TEST(LoaderEpochs, NoSpecialTokensWhenNoneConfigured) {
  LoaderOptions o = license_options();
  o.bos_id.reset();
  o.eos_id.reset();
  Corpus corpus = scan_corpus(o, ByteEncoder());
  World w(o, 1);
  Coverage cov;
  w.run_through_epoch(0, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
  EXPECT_EQ(cov.specials, 0);
}

}  // namespace
}  // namespace llmtrain::data::testing
