// Save / resume on the same world size: the continuation is bitwise identical to an uninterrupted run, at
// any step (first step, mid-document, epoch end), and a chain of resumes equals one run.
#include <gtest/gtest.h>

#include "llmtrain/data/simulate.hpp"
#include "loader_test_util.hpp"

namespace llmtrain::data::testing {
namespace {

// Steps [from, to) of `a` equal steps [0, to - from) of `b`, rank by rank: tokens, doc_index and provenance.
void expect_same_steps(const World& a, int from, int to, const World& b) {
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    for (int s = from; s < to; ++s) {
      const Batch& x = a.batches[r][static_cast<std::size_t>(s)];
      const Batch& y = b.batches[r][static_cast<std::size_t>(s - from)];
      ASSERT_EQ(x.tokens, y.tokens) << "rank " << r << " step " << s;
      ASSERT_EQ(x.doc_index, y.doc_index) << "rank " << r << " step " << s;
      for (std::size_t i = 0; i < a.provenance[r][static_cast<std::size_t>(s)].size(); ++i)
        ASSERT_EQ(provenance_json(s, 0, 0, a.provenance[r][static_cast<std::size_t>(s)][i]),
                  provenance_json(s, 0, 0, b.provenance[r][static_cast<std::size_t>(s - from)][i]));
    }
  }
}

LoaderOptions options() { return small_options({{"licenses", license_corpus(), 1.0, "text"}}); }

TEST(LoaderResume, TokenIdenticalAtFirstStepsMidDocumentAndEpochEnd) {
  LoaderOptions o = options();
  Corpus corpus = scan_corpus(o, ByteEncoder());
  World probe(o, 2);
  const int epoch_end = probe.run_through_epoch(0, nullptr, nullptr);
  const int total = epoch_end + 30;
  World reference(o, 2);
  reference.steps(total);
  // A step after which rank 0 is inside a document: its last row ends before the document's last token.
  int mid_document = -1;
  for (int s = 5; s < total && mid_document < 0; ++s) {
    const SpanInfo& last = reference.provenance[0][static_cast<std::size_t>(s)].back().spans.back();
    if (last.token_end < corpus.docs.at({last.file, last.byte_offset}).size()) mid_document = s + 1;
  }
  ASSERT_GT(mid_document, 0);
  for (int k : {0, 1, mid_document, epoch_end, epoch_end + 1}) {
    World first(o, 2);
    first.steps(k);
    World second(o, 2, first.states());
    second.steps(total - k);
    expect_same_steps(reference, k, total, second);
  }
}

TEST(LoaderResume, ChainOfFiveResumesEqualsOneRun) {
  LoaderOptions o = options();
  const int steps[] = {3, 17, 1, 40, 25};
  World reference(o, 3);
  reference.steps(3 + 17 + 1 + 40 + 25);
  std::vector<std::string> states;
  int done = 0;
  for (int n : steps) {
    World w(o, 3, states);
    w.steps(n);
    expect_same_steps(reference, done, done + n, w);
    states = w.states();
    done += n;
  }
}

TEST(LoaderResume, DatasetWithoutDocumentsOnSomeRanksResumesIdentically) {
  // 3 text files over 16 logical shards and 4 ranks: at least one rank owns no text document.
  LoaderOptions o = small_options({{"jsonl", license_corpus() + "/*.jsonl*", 0.7, "text"},
                                   {"texts", license_corpus() + "/text", 0.3, "text"}});
  World reference(o, 4);
  reference.steps(60);
  bool some_rank_empty = false;
  for (const auto& r : reference.ranks) some_rank_empty |= r->stats().datasets[1].epoch == UINT32_MAX;
  EXPECT_TRUE(some_rank_empty);
  for (int k : {1, 7, 30}) {
    World first(o, 4);
    first.steps(k);
    World second(o, 4, first.states());
    second.steps(60 - k);
    expect_same_steps(reference, k, 60, second);
  }
}

TEST(LoaderResume, StateOfAFreshLoaderResumesToTheSameRun) {
  LoaderOptions o = options();
  World reference(o, 1);
  reference.steps(5);
  std::string blob = Loader(o, byte_encoder(), 0, 1).state();
  World resumed(o, 1, {blob});
  resumed.steps(5);
  expect_same_steps(reference, 0, 5, resumed);
}

TEST(LoaderResume, RestoreAfterNextIsRefused) {
  LoaderOptions o = options();
  Loader loader(o, byte_encoder(), 0, 1);
  std::string blob = loader.state();
  loader.next();
  EXPECT_THROW(loader.restore({blob}), Error);
}

}  // namespace
}  // namespace llmtrain::data::testing
