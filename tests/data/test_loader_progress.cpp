// Progress: the loader always moves on. A dataset whose documents frame to zero tokens (empty texts, no
// BOS/EOS) once made mixing pick it for ever (it moves no mixing counter) while its shard stream wrapped from
// epoch to epoch: 100 % CPU and no batch. These tests hang without the fix, so ctest gives them a TIMEOUT.
#include <gtest/gtest.h>

#include "llmtrain/core/stop_signal.hpp"
#include "loader_test_util.hpp"

namespace llmtrain::data::testing {
namespace {

// A dataset of `n` empty documents, and options mixing it with a real one at a tenth of the weight.
struct Mixture {
  TempDir dir{"progress"};
  LoaderOptions options;
  explicit Mixture(int n, bool with_text = true) {
    std::string blank;
    for (int i = 0; i < n; ++i) blank += "{\"text\": \"\"}\n";
    write_file(dir / "blank/part.jsonl", blank);
    std::vector<DatasetSpec> specs;
    if (with_text) {
      write_generated_corpus(dir / "text", 2, 60, 12);
      specs.push_back({"text", dir / "text", 0.9});
    }
    specs.push_back({"blank", dir / "blank", 0.1});
    options = small_options(specs);
    options.bos_id.reset();  // without BOS/EOS an empty text is a document of zero tokens
    options.eos_id.reset();
  }
};

TEST(LoaderProgress, TokenlessDatasetInAMixtureIsSkippedAndReported) {
  Mixture m(40);
  const Corpus corpus = scan_corpus(m.options, ByteEncoder());
  World world(m.options, 2);
  Coverage coverage;
  coverage.bos = coverage.eos = -1;
  world.steps(30, &coverage, &corpus);
  for (const auto& rank : world.provenance)
    for (const auto& batch : rank)
      for (const RowProvenance& row : batch)
        for (const SpanInfo& span : row.spans) EXPECT_EQ(span.dataset, "text");
  for (const auto& rank : world.ranks) {
    const LoaderStats st = rank->stats();
    ASSERT_EQ(st.datasets.size(), 2u);
    EXPECT_FALSE(st.datasets[0].no_tokens);
    EXPECT_TRUE(st.datasets[1].no_tokens);
    EXPECT_EQ(st.datasets[1].epoch, UINT32_MAX);
    EXPECT_EQ(st.datasets[1].tokens_drawn, 0u);
    // Consumed and counted like any other document: at least two epochs of this rank's share of the 40.
    EXPECT_GE(st.datasets[1].tokenless_documents, 2u * 40u / 2u - 20u);
    EXPECT_GE(st.datasets[1].records_read, st.datasets[1].tokenless_documents);
  }
}

TEST(LoaderProgress, ResumeAndRescaleStayExactWithATokenlessDataset) {
  Mixture m(40);
  const Corpus corpus = scan_corpus(m.options, ByteEncoder());
  World straight(m.options, 2);
  straight.steps(12);
  World first(m.options, 2);
  first.steps(5);
  World resumed(m.options, 2, first.states());
  resumed.steps(7);
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 7; ++s)
      EXPECT_EQ(resumed.batches[r][s].tokens, straight.batches[r][s + 5].tokens) << "rank " << r << " step " << s;
  // Rescaled 2 -> 3 and run through the epoch: every token of the text dataset exactly once.
  Coverage coverage;
  coverage.bos = coverage.eos = -1;
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 5; ++s) coverage.add(first.batches[r][s], first.provenance[r][s], corpus);
  World rescaled(m.options, 3, first.states());
  rescaled.run_through_epoch(0, &coverage, &corpus, 2000);
  coverage.expect_exactly(corpus, 0);
}

TEST(LoaderProgress, OnlyTokenlessDatasetsFailNamingThem) {
  Mixture m(10, false);
  Loader loader(m.options, byte_encoder(), 0, 1);
  try {
    loader.next();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'blank': no token in a whole epoch"), std::string::npos) << e.what();
  }
}

TEST(LoaderProgress, StopRequestEndsARetryWithoutProgress) {
  Mixture m(10, false);
  Loader loader(m.options, byte_encoder(), 0, 1);
  request_stop();
  try {
    loader.next();
    clear_stop_request();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    clear_stop_request();
    EXPECT_NE(std::string(e.what()).find("stop requested while skipping documents without tokens of dataset 'blank'"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmtrain::data::testing
