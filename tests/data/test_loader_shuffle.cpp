// Shuffle quality on the worst layout: files by source, documents sorted by length inside each file. The
// position of a document in its epoch must not depend on its file or its length (chi-squared over deciles),
// and consecutive rows should rarely start in the same file.
#include <gtest/gtest.h>

#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

// Chi-squared statistic of `counts` against a uniform distribution.
double chi_squared(const std::vector<int>& counts) {
  double n = 0;
  for (int c : counts) n += c;
  double expected = n / static_cast<double>(counts.size()), chi2 = 0;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

TEST(LoaderShuffle, PositionsUniformOverDecilesAndRowsMixFiles) {
  TempDir dir("shuffle");
  const int files = 4, docs = 400;
  write_generated_corpus(dir.path(), files, docs, 60, /*sorted_by_length=*/true);
  LoaderOptions o = small_options({{"sorted", dir.path(), 1.0, "text"}}, 127);
  o.logical_shards = 32;
  o.shuffle_window = 64;
  o.block_bytes = 2048;
  o.batch_rows = 1;
  // Counts summed over three seeds: a bias adds up across them while the statistic stays chi-squared with 9
  // degrees of freedom, so one seed's chance excess (p = 0.001 per group) cannot decide the test alone.
  std::map<std::string, std::vector<int>> deciles;
  for (std::uint64_t seed : {1, 2, 3}) {
    o.seed = seed;
    World w(o, 1);
    w.run_through_epoch(0, nullptr, nullptr);
    // Position of each epoch-0 document: the order of first appearance (the shuffle window blends the last
    // rows of an epoch with the first of the next, so row numbers would stretch the end of the epoch).
    std::map<std::pair<std::string, std::uint64_t>, std::size_t> first_row;
    std::vector<std::string> row_file;  // file of the first span of each row
    std::vector<std::uint32_t> row_epoch;
    for (const auto& batch : w.provenance[0])
      for (const auto& row : batch) {
        for (const auto& s : row.spans)
          if (s.epoch == 0) first_row.emplace(std::make_pair(s.file, s.byte_offset), first_row.size());
        row_file.push_back(row.spans.front().file);
        row_epoch.push_back(row.spans.front().epoch);
      }
    ASSERT_EQ(first_row.size(), static_cast<std::size_t>(files * docs));
    const std::size_t epoch_docs = first_row.size();
    std::size_t epoch_rows = 0;
    while (epoch_rows < row_epoch.size() && row_epoch[epoch_rows] == 0) ++epoch_rows;
    // Groups: each file, and the shorter and longer halves of all documents (offset order = length order).
    std::map<std::string, std::vector<std::uint64_t>> offsets;
    for (const auto& [doc, row] : first_row) offsets[doc.first].push_back(doc.second);
    for (auto& [file, list] : offsets) std::sort(list.begin(), list.end());
    for (const auto& [doc, row] : first_row) {
      int decile = static_cast<int>(10 * row / epoch_docs);
      const auto& list = offsets[doc.first];
      bool shorter = std::lower_bound(list.begin(), list.end(), doc.second) - list.begin() < docs / 2;
      for (const std::string& group : {doc.first, std::string(shorter ? "shorter half" : "longer half")}) {
        deciles[group].resize(10);
        ++deciles[group][static_cast<std::size_t>(decile)];
      }
    }
    // Consecutive rows from the same file: about 1 / files if independent.
    int same = 0;
    for (std::size_t i = 1; i < epoch_rows; ++i) same += row_file[i] == row_file[i - 1];
    EXPECT_LT(static_cast<double>(same) / static_cast<double>(epoch_rows - 1), 1.5 / files) << "seed " << seed;
  }
  for (const auto& [group, counts] : deciles)
    EXPECT_LT(chi_squared(counts), 27.88)
        << ::testing::PrintToString(counts) << " " << group << " (chi-squared, 9 degrees of freedom, p = 0.001)";
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
