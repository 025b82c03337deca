// The audit path from outside: `simulate` writes provenance JSON lines and per-rank state files; a run that
// rescales through state directories covers the epoch exactly once as the provenance files tell it. And the
// end-to-end run with the real GPT-2 tokenizer (the copy committed under inputs/tokenizers).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "audit.hpp"

#include <nlohmann/json.hpp>

#include "llmtrain/data/simulate.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

LoaderOptions options() { return small_options({{"licenses", license_corpus(), 1.0, "text"}}); }

TEST(Simulate, ProvenanceLinesAndRescaleThroughStateDirectoriesCoverTheEpochOnce) {
  TempDir dir("simulate");
  LoaderOptions o = options();
  Corpus corpus = scan_corpus(o, ByteEncoder());
  std::size_t corpus_tokens = 0;
  for (const auto& [key, tokens] : corpus.docs) corpus_tokens += tokens.size();
  std::ostringstream log;
  // 3 ranks, then 5, then 2 until well past the end of epoch 0.
  simulate(o, byte_encoder(), {3, 30, 2, "", dir / "s1", dir / "p1.jsonl"}, log);
  simulate(o, byte_encoder(), {5, 20, 2, dir / "s1", dir / "s2", dir / "p2.jsonl"}, log);
  const std::int64_t rows_left = static_cast<std::int64_t>(corpus_tokens) / 64 + 200;
  simulate(o, byte_encoder(), {2, rows_left / 4, 2, dir / "s2", dir / "s3", dir / "p3.jsonl"}, log);
  EXPECT_NE(log.str().find("rank 4: state"), std::string::npos) << log.str();
  EXPECT_EQ(load_state_dir(dir / "s3").size(), 2u);

  std::map<std::pair<std::string, std::uint64_t>, std::vector<int>> count;
  std::int64_t specials = 0;
  for (const char* name : {"p1.jsonl", "p2.jsonl", "p3.jsonl"}) {
    std::ifstream in(dir / name);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
      if (lines++ == 0) {
        EXPECT_EQ(line.rfind("{\"step\":0,\"rank\":0,\"row\":0,\"spans\":[[\"licenses\",", 0), 0u) << line;
      }
      nlohmann::json j = nlohmann::json::parse(line);
      specials += static_cast<std::int64_t>(j["special"].size());
      for (const auto& s : j["spans"]) {
        if (s[3].get<int>() != 0) continue;  // epoch 0 only
        auto key = std::make_pair(s[1].get<std::string>(), s[2].get<std::uint64_t>());
        std::vector<int>& c = count[key];
        c.resize(corpus.docs.at(key).size());
        for (auto t = s[4].get<std::uint32_t>(); t < s[5].get<std::uint32_t>(); ++t) ++c[t];
      }
    }
    EXPECT_GT(lines, 0) << name;
  }
  ASSERT_EQ(count.size(), corpus.docs.size());
  for (const auto& [key, c] : count)
    for (int n : c) ASSERT_EQ(n, 1) << key.first << " @" << key.second;
  EXPECT_GE(specials, static_cast<std::int64_t>(2 * corpus.docs.size()));
}

std::string gpt2_dir() { return source_dir() + "/inputs/tokenizers/gpt2"; }

TEST(Simulate, EndToEndWithTheGpt2TokenizerExactlyOnceAcrossARescale) {
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(gpt2_dir());
  auto encoder = std::make_shared<TokenizerEncoder>(tok);
  LoaderOptions o = options();
  set_default_special_tokens(tok, o);
  ASSERT_FALSE(o.bos_id.has_value());
  ASSERT_EQ(o.eos_id, std::optional<TokenId>(50256));
  Corpus corpus = scan_corpus(o, *encoder);
  Coverage cov;
  cov.bos = cov.eos = 50256;
  World first(o, 2, {}, encoder);
  first.steps(40, &cov, &corpus);
  World second(o, 3, first.states(), encoder);
  second.run_through_epoch(0, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
  // Same W resume with the real tokenizer: bitwise identical.
  World a(o, 2, {}, encoder), b(o, 2, {}, encoder);
  a.steps(30);
  b.steps(10);
  World c(o, 2, b.states(), encoder);
  c.steps(20);
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 20; ++s) ASSERT_EQ(a.batches[r][10 + s].tokens, c.batches[r][s].tokens);
}

// --audit with --load-state (once refused): the resumed run's epochs that began after the resume are audited
// whole, the earlier ones for duplicates only, and the run through two more epochs is exactly once.
TEST(Simulate, AuditCoversAResumedRun) {
  TempDir dir("simulate-audit");
  LoaderOptions o = options();
  std::size_t corpus_tokens = 0;
  for (const auto& [key, tokens] : scan_corpus(o, ByteEncoder()).docs) corpus_tokens += tokens.size() + 2;
  std::ostringstream first, resumed;
  SimulateOptions save{3, 30, 2, "", dir / "s1", ""};
  save.audit = true;
  EXPECT_EQ(simulate(o, byte_encoder(), save, first), 0u) << first.str();
  // 2 ranks x 2 rows x 64 tokens per step: three epochs' worth of steps finishes epochs 1 and 2 everywhere.
  SimulateOptions resume{2, static_cast<std::int64_t>(3 * corpus_tokens / 256 + 100), 2, dir / "s1", "", ""};
  resume.audit = true;
  EXPECT_EQ(simulate(o, byte_encoder(), resume, resumed), 0u) << resumed.str();
  const std::string log = resumed.str();
  EXPECT_NE(log.find("epochs before 1 began before the resume (checked for duplicates only)"), std::string::npos) << log;
  EXPECT_NE(log.find("documents in each"), std::string::npos) << log;  // some epoch after the resume was settled
  EXPECT_NE(log.find("exactly once: yes"), std::string::npos) << log;
  EXPECT_NE(log.find("skipped records: 0 bad records in 0 files (all ranks)"), std::string::npos) << log;
}

// The audit through the prefetch hand-off and the window while it fills, across a save and a restore: a run
// saved at step 10 (20 of the 64-row window's 32 filling rows emitted, batches in flight in the prefetch ring)
// and resumed, prefetching again, hands out exactly the rows of the uninterrupted synchronous run, and the
// audit finds every token once.
TEST(Simulate, PrefetchAndWindowFillAcrossSaveAndRestoreMatchTheUninterruptedRun) {
  TempDir dir("simulate-prefetch");
  LoaderOptions o = options();
  o.shuffle_window = 64;
  std::ostringstream log;
  SimulateOptions whole{2, 40, 2, "", "", dir / "whole.jsonl"};
  whole.audit = true;
  ASSERT_EQ(simulate(o, byte_encoder(), whole, log), 0u) << log.str();
  SimulateOptions first{2, 10, 2, "", dir / "s1", dir / "first.jsonl"}, second{2, 30, 2, dir / "s1", "", dir / "second.jsonl"};
  first.prefetch_rows = second.prefetch_rows = 6;  // a ring of 3 batches
  first.audit = second.audit = true;
  ASSERT_EQ(simulate(o, byte_encoder(), first, log), 0u) << log.str();
  const SavedState saved = decode_state(load_state_dir(dir / "s1")[0]);
  // The state is what was consumed, 20 rows, however far the producer ran ahead, from a window that was still
  // filling: min(64, 2 x rows taken) - 1 rows.
  EXPECT_EQ(saved.window_counter, 20u);
  EXPECT_EQ(saved.window.size(), 2 * saved.window_counter - 1);
  EXPECT_LT(saved.window.size(), 63u);
  ASSERT_EQ(simulate(o, byte_encoder(), second, log), 0u) << log.str();
  auto rows = [&](const char* name, std::int64_t step_offset) {
    std::vector<std::string> out;
    std::ifstream in(dir / name);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      j["step"] = j["step"].get<std::int64_t>() + step_offset;
      out.push_back(j.dump());
    }
    return out;
  };
  std::vector<std::string> resumed = rows("first.jsonl", 0), rest = rows("second.jsonl", 10);
  resumed.insert(resumed.end(), rest.begin(), rest.end());
  EXPECT_EQ(resumed, rows("whole.jsonl", 0));
  EXPECT_EQ(resumed.size(), 160u);
}

// The audit itself: a token range delivered twice, and a finished epoch missing part of a document.
TEST(SimulateAudit, FindsDuplicatesAndGaps) {
  auto row = [](std::uint32_t epoch, std::uint32_t begin, std::uint32_t end) {
    RowProvenance p;
    p.spans.push_back({"d", "f", 0, epoch, begin, end});
    return p;
  };
  std::ostringstream out;
  CoverageAudit clean;
  clean.add(row(0, 10, 20));
  clean.add(row(0, 0, 10));
  clean.add(row(1, 0, 20));
  EXPECT_EQ(clean.report({{"d", 2}}, out), 0u) << out.str();
  CoverageAudit twice;
  twice.add(row(0, 0, 10));
  twice.add(row(0, 5, 15));
  EXPECT_EQ(twice.report({{"d", 0}}, out), 1u);
  CoverageAudit gap, unfinished;
  for (CoverageAudit* a : {&gap, &unfinished}) {
    a->add(row(0, 0, 10));
    a->add(row(0, 12, 20));
  }
  EXPECT_EQ(gap.report({{"d", 1}}, out), 1u);
  EXPECT_EQ(unfinished.report({{"d", 0}}, out), 0u);  // epoch 0 not finished yet: a gap is expected
  // Resumed: epoch 0 began before the resume (its gap is the earlier run's part), epoch 1 must be whole.
  CoverageAudit resumed;
  resumed.resumed({{"d", 1}});
  resumed.add(row(0, 12, 20));
  resumed.add(row(1, 0, 4));
  resumed.add(row(1, 6, 10));
  EXPECT_EQ(resumed.report({{"d", 1}}, out), 0u);
  EXPECT_EQ(resumed.report({{"d", 2}}, out), 1u);  // epoch 1 finished with a gap
}

}  // namespace
}  // namespace llmtrain::data::testing
