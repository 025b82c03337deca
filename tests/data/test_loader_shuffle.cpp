// Shuffle quality on the worst layout: files by source, documents sorted by length inside each file. The
// position of a document in its epoch must not depend on its file or its length (Hotelling's T^2 over the
// tenths of the epoch, across a fixed set of seeds; the statistic is shown to fail for biased permutations),
// and consecutive rows should rarely start in the same file.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

// A document: (file, byte offset). Inside a file, offset order is length order (the corpus is sorted).
using Doc = std::pair<std::string, std::uint64_t>;
constexpr int kFiles = 4, kDocs = 400, kOrders = 50;
// Per group (each file, and the shorter half of all documents; the longer half is its complement), the counts of
// its documents in each tenth of an epoch, one vector per order.
using Deciles = std::map<std::string, std::vector<std::vector<int>>>;

// Adds the deciles of one epoch's order of documents (each document once).
void add_order(const std::vector<Doc>& order, Deciles& deciles) {
  std::map<std::string, std::vector<std::uint64_t>> offsets;
  for (const Doc& doc : order) offsets[doc.first].push_back(doc.second);
  for (auto& [file, list] : offsets) std::sort(list.begin(), list.end());
  std::map<std::string, std::vector<int>> counts;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [file, offset] = order[i];
    const auto& list = offsets[file];
    std::vector<std::string> groups = {file};
    if (std::lower_bound(list.begin(), list.end(), offset) - list.begin() < kDocs / 2) groups.push_back("shorter half");
    for (const std::string& group : groups) {
      counts[group].resize(10);
      ++counts[group][10 * i / order.size()];
    }
  }
  for (auto& [group, c] : counts) deciles[group].push_back(std::move(c));
}

// Hotelling's T^2 of a group's decile counts over K independent orders against equal tenths, as the F(9, K - 9)
// statistic it follows when the counts' mean is uniform (counts are near normal at 40-80 per tenth). The
// covariance is estimated from the orders themselves, not assumed multinomial: the loader reads a block's
// documents close together, so positions cluster and the counts vary 1.4-2 times more than for a random
// permutation (which made the former chi-squared bound fail by chance on 3-9 % of seeds), and nothing is lost
// to the hypergeometric factor either. Nine tenths: the tenth is fixed by them.
double hotelling_f(const std::vector<std::vector<int>>& orders) {
  constexpr std::size_t p = 9;
  const double k = static_cast<double>(orders.size());
  double n = 0;
  for (int c : orders[0]) n += c;
  std::vector<double> mean(p, 0);
  for (const auto& c : orders)
    for (std::size_t i = 0; i < p; ++i) mean[i] += c[i] / k;
  std::vector<std::vector<double>> a(p, std::vector<double>(p + 1, 0));  // [covariance | mean - n / 10]
  for (const auto& c : orders)
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < p; ++j) a[i][j] += (c[i] - mean[i]) * (c[j] - mean[j]) / (k - 1);
  for (std::size_t i = 0; i < p; ++i) a[i][p] = mean[i] - n / 10;
  const std::vector<double> d = [&] {
    std::vector<double> v(p);
    for (std::size_t i = 0; i < p; ++i) v[i] = a[i][p];
    return v;
  }();
  for (std::size_t col = 0; col < p; ++col) {  // Gauss-Jordan: a[.][p] becomes covariance^-1 (mean - n / 10)
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < p; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    for (std::size_t r = 0; r < p; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (std::size_t j = col; j <= p; ++j) a[r][j] -= f * a[col][j];
    }
  }
  double t2 = 0;
  for (std::size_t i = 0; i < p; ++i) t2 += k * d[i] * a[i][p] / a[i][i];
  return (k - p) / (p * (k - 1)) * t2;
}

// F(9, kOrders - 9 = 41) exceeds this with probability 0.001 / 5: five groups tested at once (Bonferroni), so an
// unbiased shuffle fails with probability under 0.001 whatever the correlation between the groups.
constexpr double kBound = 4.836;

// Position of each epoch-0 document in the loader's rows: where its first piece (token 0) is handed out. (The
// first appearance of any piece, used before, puts a document that spans several rows at the earliest of them,
// which the row shuffle makes early: long documents crowded the first tenth, 87 instead of 80 per half.)
std::vector<Doc> loader_order(const World& w) {
  std::set<Doc> seen;
  std::vector<Doc> order;
  for (const auto& batch : w.provenance[0])
    for (const auto& row : batch)
      for (const auto& s : row.spans)
        if (s.epoch == 0 && s.token_begin == 0 && seen.emplace(s.file, s.byte_offset).second)
          order.emplace_back(s.file, s.byte_offset);
  return order;
}

TEST(LoaderShuffle, PositionsUniformOverDecilesAndRowsMixFiles) {
  TempDir dir("shuffle");
  write_generated_corpus(dir.path(), kFiles, kDocs, 60, /*sorted_by_length=*/true);
  LoaderOptions o = small_options({{"sorted", dir.path(), 1.0, "text"}}, 127);
  o.logical_shards = 32;
  o.shuffle_window = 64;
  o.block_bytes = 2048;
  o.batch_rows = 1;
  Deciles deciles;
  for (std::uint64_t seed = 1; seed <= kOrders; ++seed) {  // a fixed set of seeds: the test is deterministic
    o.seed = seed;
    World w(o, 1);
    w.run_through_epoch(0, nullptr, nullptr);
    const std::vector<Doc> order = loader_order(w);
    ASSERT_EQ(order.size(), static_cast<std::size_t>(kFiles * kDocs));
    add_order(order, deciles);
    // Consecutive rows from the same file: about 1 / files if independent.
    int same = 0, rows = 0;
    std::string previous;
    for (const auto& batch : w.provenance[0])
      for (const auto& row : batch) {
        if (row.spans.front().epoch != 0) break;
        same += rows++ > 0 && row.spans.front().file == previous;
        previous = row.spans.front().file;
      }
    EXPECT_LT(static_cast<double>(same) / (rows - 1), 1.5 / kFiles) << "seed " << seed;
  }
  // Seeds 1-50 give F 0.4-0.6 for the files and 2.7 for the shorter half. Over 400 seeds the files stay unbiased
  // (F 0.7-1.6) but the halves are not (F 9.3): long documents are about 3 % over-represented in the first and
  // last tenths and under-represented mid-epoch, a small length effect this bound does not fail on
  // (docs/data-loader.md, Shuffling).
  ASSERT_EQ(deciles.size(), 5u);
  for (const auto& [group, orders] : deciles)
    EXPECT_LT(hotelling_f(orders), kBound) << group << ": Hotelling's T^2 as F(9, " << kOrders - 9 << ")";
}

// The statistic rejects the biases the loader test must catch. Orders: uniformly random permutations of the same
// documents, sorted by key = uniform draw - shift for one group's documents. A shift of 0.02 (the group leads by
// 2 % of the epoch; the shorter half gets 72 instead of 80 documents in the first tenth) fails for that group (F
// 14-30 in simulations against the bound 4.8); no shift passes for every group.
TEST(LoaderShuffle, StatisticFailsForABiasedPermutation) {
  std::vector<Doc> docs;
  for (int f = 0; f < kFiles; ++f)
    for (int d = 0; d < kDocs; ++d) docs.emplace_back("part-" + std::to_string(f), static_cast<std::uint64_t>(d));
  auto orders = [&](const std::function<double(const Doc&)>& shift) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> uniform(0, 1);
    Deciles deciles;
    for (int k = 0; k < kOrders; ++k) {
      std::vector<std::pair<double, Doc>> keyed;
      for (const Doc& doc : docs) keyed.emplace_back(uniform(rng) - shift(doc), doc);
      std::sort(keyed.begin(), keyed.end());
      std::vector<Doc> order;
      for (const auto& [key, doc] : keyed) order.push_back(doc);
      add_order(order, deciles);
    }
    return deciles;
  };
  for (const auto& [group, o] : orders([](const Doc&) { return 0.0; }))
    EXPECT_LT(hotelling_f(o), kBound) << "unbiased, " << group;
  const Deciles long_first = orders([](const Doc& d) { return d.second >= kDocs / 2 ? 0.02 : 0.0; });
  EXPECT_GT(hotelling_f(long_first.at("shorter half")), kBound) << "longer documents first";
  const Deciles file_first = orders([](const Doc& d) { return d.first == "part-2" ? 0.02 : 0.0; });
  EXPECT_GT(hotelling_f(file_first.at("part-2")), kBound) << "one file first";
}

// The window emits while it fills: before row c it holds min(window, 2 (c + 1)) rows, so the first batch
// packs about twice its rows whatever the window's size.
TEST(LoaderShuffle, WindowEmitsWhileItFills) {
  for (std::int64_t window : {64, 10000}) {
    LoaderOptions o = small_options({{"licenses", license_corpus(), 1.0, "text"}});
    o.shuffle_window = window;
    Loader loader(o, byte_encoder(), 0, 1);
    for (std::uint64_t step = 1; step <= 40; ++step) {
      loader.next();  // 2 rows
      const SavedState s = decode_state(loader.state());
      ASSERT_EQ(s.window_counter, 2 * step);
      ASSERT_EQ(s.window.size(), std::min<std::uint64_t>(static_cast<std::uint64_t>(window), 4 * step) - 1)
          << "window " << window << ", step " << step;
    }
  }
}

// The order while the window fills is a function of seed and state: a state taken after any row of the
// filling phase (and after it) resumes to exactly the rows of the uninterrupted run.
TEST(LoaderShuffle, WindowFillOrderSurvivesSaveAndRestoreAtEveryRow) {
  LoaderOptions o = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  o.shuffle_window = 32;
  o.batch_rows = 1;
  World reference(o, 1);
  reference.steps(45);
  Loader loader(o, byte_encoder(), 0, 1);
  for (int step = 0; step < 40; ++step) {
    World resumed(o, 1, {loader.state()});
    resumed.steps(5);
    for (int s = 0; s < 5; ++s)
      ASSERT_EQ(resumed.batches[0][static_cast<std::size_t>(s)].tokens,
                reference.batches[0][static_cast<std::size_t>(step + s)].tokens) << "saved after row " << step;
    loader.next();
  }
}

}  // namespace
}  // namespace llmtrain::data::testing
