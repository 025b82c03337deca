// Unit tests of the loader's stages: keyed permutations, the shard draw's weight tree, the logical shard layout and
// block reading, packing.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "loader_test_util.hpp"
#include "packer.hpp"
#include "permutation.hpp"
#include "shards.hpp"
#include "weight_tree.hpp"

namespace llmtrain::data::testing {
namespace {

TEST(KeyedPermutation, IsABijectionForAnySizeAndKey) {
  for (std::uint64_t n : {1, 2, 3, 5, 16, 17, 100, 1000, 4097, 65536}) {
    for (std::uint64_t key : {0ULL, 1ULL, 0xdeadbeefULL}) {
      KeyedPermutation p(n, key);
      std::vector<bool> seen(n, false);
      for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t v = p(i);
        ASSERT_LT(v, n);
        ASSERT_FALSE(seen[v]) << "n " << n << " key " << key;
        seen[v] = true;
      }
    }
  }
}

TEST(KeyedPermutation, KeysGiveDifferentOrders) {
  KeyedPermutation a(1000, 1), b(1000, 2);
  int same = 0, fixed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same += a(i) == b(i);
    fixed += a(i) == i;
  }
  EXPECT_LT(same, 20);
  EXPECT_LT(fixed, 20);
}

// Weights that are small integers sum exactly, so the item at each point is known: the one whose interval
// [prefix, prefix + weight) holds it. Items of weight 0 (finished shards) are never picked, not even at the
// very end, where rounding may put u * total.
TEST(WeightTree, PicksTheItemWhoseIntervalHoldsThePoint) {
  for (std::size_t n : {1, 2, 3, 5, 8, 100, 1024, 1025}) {
    SCOPED_TRACE(::testing::Message() << n << " items");
    std::vector<double> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<double>((i * 7 + 3) % 5);  // zeros included
    w[n / 2] = 1;  // at least one positive
    WeightTree tree;
    tree.reset(n);
    for (std::size_t i = 0; i < n; ++i) tree.set(i, w[i]);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    ASSERT_EQ(tree.total(), total);
    double prefix = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (w[i] > 0) {
        EXPECT_EQ(tree.pick(prefix), i);
        EXPECT_EQ(tree.pick(prefix + 0.5), i);
        EXPECT_EQ(tree.pick(std::nextafter(prefix + w[i], 0.0)), i);
      }
      prefix += w[i];
    }
    std::size_t last = n;
    while (w[--last] <= 0) {}
    EXPECT_EQ(tree.pick(total), last) << "a point rounded up to the total";
    tree.set(last, 0);
    if (tree.total() > 0) {
      EXPECT_NE(tree.pick(tree.total()), last) << "weight 0 now";
    }
  }
}

// The sums are recomputed from the children, so they depend on the weights only, not on the order or history
// of the updates: a tree rebuilt from saved cursors picks exactly what the one updated draw by draw picks.
TEST(WeightTree, SumsArePureFunctionsOfTheWeights) {
  const std::size_t n = 1000;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = 0.1 * static_cast<double>(i % 13) + 1.0 / static_cast<double>(i + 3);
  WeightTree fresh, updated;
  fresh.reset(n);
  updated.reset(n);
  for (std::size_t i = 0; i < n; ++i) fresh.set(i, w[i]);
  for (std::size_t i = n; i-- > 0;) updated.set(i, 1e6 * w[i] + 0.3);  // other values first, in another order
  for (std::size_t i = 0; i < n; i += 2) updated.set(i, w[i]);
  for (std::size_t i = 1; i < n; i += 2) updated.set(i, w[i]);
  ASSERT_EQ(fresh.total(), updated.total());
  for (int k = 0; k < 1000; ++k) {
    const double point = fresh.total() * (static_cast<double>(k) + 0.37) / 1000.0;
    ASSERT_EQ(fresh.pick(point), updated.pick(point)) << "point " << point;
  }
}

TEST(LogicalShards, BalancedOwnershipForAnyWorldSize) {
  for (int world : {1, 2, 3, 7, 64, 100}) {
    std::vector<int> owned(static_cast<std::size_t>(world), 0);
    for (std::uint64_t s = 0; s < 100; ++s) {
      int owners = 0;
      for (int r = 0; r < world; ++r)
        if (rank_owns_shard(s, r, world)) {
          ++owners;
          ++owned[static_cast<std::size_t>(r)];
        }
      ASSERT_EQ(owners, 1);
    }
    auto [lo, hi] = std::minmax_element(owned.begin(), owned.end());
    EXPECT_LE(*hi - *lo, 1);
  }
}

// Equally sized files read whole (.txt here; .gz and .zst alike) once landed in the shard of their first byte,
// j * L / n: with L = 1024 and 8 files all of them on rank 0 for W = 2, 4, 8. The j-th goes to shard j % L now,
// so every W up to the number of files gives every rank a file; beyond, the error says what to change.
TEST(LogicalShards, WholeFilesSpreadOverEveryRank) {
  TempDir dir("whole");
  for (int f = 0; f < 8; ++f) write_file(dir / ("doc-" + std::to_string(f) + ".txt"), "the same length, file " + std::to_string(f));
  LoaderOptions o = small_options({{"txt", dir.path(), 1.0, "text"}});
  o.logical_shards = 1024;
  o.shuffle_window = 1;
  o.batch_rows = 1;
  o.seq_len = 7;
  for (int world : {2, 4, 8}) {
    DatasetFiles ds = list_dataset(o.datasets[0]);
    std::vector<int> files_of(static_cast<std::size_t>(world), 0);
    for (std::uint64_t s = 0; s < 1024; ++s) files_of[s % world] += static_cast<int>(shard_blocks(ds, 1024, s, 4096).size());
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(files_of[static_cast<std::size_t>(r)], 8 / world) << "rank " << r << " of " << world;
      Loader loader(o, byte_encoder(), r, world);
      EXPECT_NO_THROW(loader.next()) << "rank " << r << " of " << world;
    }
  }
  Loader ninth(o, byte_encoder(), 8, 16);
  try {
    ninth.next();
    ADD_FAILURE() << "rank 8 of 16 has no file and did not say so";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("none of the 64 logical shards rank 8 of 16 owns holds data: 8 files read whole"),
              std::string::npos) << what;
    EXPECT_NE(what.find("Run on at most 8 ranks, or split the dataset into at least 16 files"), std::string::npos)
        << what;
  }
}

// Every record of the corpus belongs to exactly one block of exactly one shard, whatever the cut.
TEST(LogicalShards, EveryRecordInExactlyOneBlock) {
  TempDir dir("blocks");
  write_generated_corpus(dir.path(), 5, 50, 30);
  write_file(dir / "z.txt", "a whole file is one document");
  DatasetFiles ds = list_dataset({"gen", dir.path(), 1.0, "text"});
  ASSERT_EQ(ds.files.size(), 6u);
  std::set<std::pair<std::uint32_t, std::uint64_t>> all;
  for (std::uint32_t f = 0; f < ds.files.size(); ++f) {
    LoadedBlock b = read_block(ds.files[f], {f, 0, ds.files[f].size});
    for (const auto& r : b.records) all.insert({f, r.begin});
  }
  ASSERT_EQ(all.size(), 5u * 50 + 1);
  for (std::uint64_t shards : {1, 3, 16, 97}) {
    for (std::uint64_t block_bytes : {1, 100, 1 << 20}) {
      std::multiset<std::pair<std::uint32_t, std::uint64_t>> found;
      std::uint64_t covered = 0;
      for (std::uint64_t s = 0; s < shards; ++s) {
        ByteRange r = shard_range(ds, shards, s);
        EXPECT_EQ(r.begin, covered);
        covered = r.end;
        for (const ShardBlock& b : shard_blocks(ds, shards, s, block_bytes)) {
          LoadedBlock lb = read_block(ds.files[b.file], b);
          for (const auto& rec : lb.records) found.insert({b.file, lb.data_offset + rec.begin});
        }
      }
      EXPECT_EQ(covered, ds.split_bytes);
      using Keys = std::set<std::pair<std::uint32_t, std::uint64_t>>;
      EXPECT_TRUE(Keys(found.begin(), found.end()) == all);
      EXPECT_EQ(found.size(), all.size()) << shards << " shards, blocks of " << block_bytes;
    }
  }
}

TEST(Records, ReadRecordFindsTheRecordAtItsOffset) {
  DatasetFiles ds = list_dataset({"licenses", license_corpus(), 1.0, "text"});
  TextExtractor extractor;
  for (std::uint32_t f = 0; f < ds.files.size(); ++f) {
    LoadedBlock b = read_block(ds.files[f], {f, 0, ds.files[f].size});
    ASSERT_TRUE(b.error.empty()) << ds.files[f].path << ": " << b.error;
    for (const auto& r : b.records) {
      std::string raw = read_record(ds.files[f], r.begin);
      ASSERT_EQ(raw, b.data.substr(r.begin, r.end - r.begin));
    }
  }
}

TEST(Records, CarriageReturnsAndBlankLinesAndNoFinalNewline) {
  TempDir dir("crlf");
  write_file(dir / "a.jsonl", "{\"text\": \"one\"}\r\n\n   \n{\"text\": \"two\"}");
  DatasetFiles ds = list_dataset({"a", dir.path(), 1.0, "text"});
  LoadedBlock b = read_block(ds.files[0], {0, 0, ds.files[0].size});
  ASSERT_EQ(b.records.size(), 2u);
  TextExtractor extractor;
  std::string_view text;
  std::string why;
  ASSERT_TRUE(extractor.extract(FileFormat::jsonl, b.data.substr(b.records[0].begin, b.records[0].end), "text",
                                text, why));
  EXPECT_EQ(text, "one");
}

TEST(Packer, KeepsEveryTokenAndPlacesBosEos) {
  // Documents of lengths 0..9, byte values = document number; rows of 7 tokens.
  std::vector<std::vector<TokenId>> docs;
  for (int d = 0; d < 10; ++d) docs.push_back(std::vector<TokenId>(static_cast<std::size_t>(d), d));
  Packer packer(7, kBos, kEos, false);
  std::size_t next = 0;
  DrawDocument draw = [&](DocRef& ref, FramedDocument& framed) {
    if (next == docs.size()) return false;
    ref = DocRef{0, 0, next, 0};
    framed.tokens.push_back(kBos);
    framed.tokens.insert(framed.tokens.end(), docs[next].begin(), docs[next].end());
    framed.tokens.push_back(kEos);
    framed.length = framed.tokens.size();
    ++next;
    return true;
  };
  LoadDocument load = [&](const DocRef&, FramedDocument&) { FAIL() << "no reload expected"; };
  std::vector<TokenId> stream, expected;
  for (const auto& d : docs) {
    expected.push_back(kBos);
    expected.insert(expected.end(), d.begin(), d.end());
    expected.push_back(kEos);
  }
  while (stream.size() + 7 <= expected.size()) {
    PackedRow row = packer.pack(draw, load);
    ASSERT_EQ(row.tokens.size(), 7u);
    for (const auto& [pos, id] : row.special) EXPECT_TRUE(row.tokens[pos] == kBos || row.tokens[pos] == kEos);
    std::size_t specials = 0;
    for (TokenId t : row.tokens) specials += t == kBos || t == kEos;
    EXPECT_EQ(specials, row.special.size());
    for (std::size_t i = 1; i < row.doc_index.size(); ++i) EXPECT_GE(row.doc_index[i], row.doc_index[i - 1]);
    stream.insert(stream.end(), row.tokens.begin(), row.tokens.end());
  }
  expected.resize(stream.size());
  EXPECT_EQ(stream, expected);
}

TEST(Packer, RebuildReproducesARowFromItsSpans) {
  Packer packer(5, kBos, std::nullopt, false);
  std::vector<TokenId> doc = {10, 11, 12, 13, 14, 15, 16, 17};
  LoadDocument load = [&](const DocRef&, FramedDocument& framed) {
    framed.tokens.push_back(kBos);
    framed.tokens.insert(framed.tokens.end(), doc.begin(), doc.end());
    framed.length = framed.tokens.size();
  };
  DrawDocument draw = [&](DocRef& ref, FramedDocument& framed) {
    ref = DocRef{0, 0, 0, 0};
    load(ref, framed);
    return true;
  };
  PackedRow first = packer.pack(draw, load), second = packer.pack(draw, load);
  Packer other(5, kBos, std::nullopt, false);
  EXPECT_EQ(other.rebuild(second.spans, load).tokens, second.tokens);
  EXPECT_EQ(first.text[0], std::make_pair(0u, 4u));
  EXPECT_EQ(second.text[0], std::make_pair(4u, 8u));
}

}  // namespace
}  // namespace llmtrain::data::testing
