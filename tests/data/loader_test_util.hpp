// Helpers of the data loader tests: temporary corpora, W loaders in one process, and an independent check of
// what the loaders delivered (every token of every document, compared with the document's own encoding).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "corpus.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/data/pretokenize.hpp"
#include "records.hpp"

namespace llmtrain::data::testing {

constexpr TokenId kBos = 256, kEos = 257;

inline std::string source_dir() { return LLMTRAIN_SOURCE_DIR; }
inline std::string license_corpus() { return source_dir() + "/tests/data/corpus"; }

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("llmtrain-" + name + "-XXXXXX")).string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `files` JSON Lines files of `docs` documents each; document i of file f has 1 + (i * 7 + f * 3) % max_words
// words, so lengths vary; sorted_by_length lays each file out by increasing length (the worst case for a
// shuffle).
inline void write_generated_corpus(const std::string& dir, int files, int docs, int max_words,
                                   bool sorted_by_length = false) {
  for (int f = 0; f < files; ++f) {
    std::vector<std::string> lines;
    for (int i = 0; i < docs; ++i) {
      int words = 1 + (i * 7 + f * 3) % max_words;
      if (sorted_by_length) words = 1 + i * max_words / docs;
      std::string text = "f" + std::to_string(f) + "d" + std::to_string(i);
      for (int w = 0; w < words; ++w) text += " w" + std::to_string((w * 31 + i) % 97);
      lines.push_back("{\"text\": \"" + text + "\"}\n");
    }
    std::string content;
    for (const auto& l : lines) content += l;
    char name[32];
    std::snprintf(name, sizeof name, "part-%03d.jsonl", f);
    write_file(dir + "/" + name, content);
  }
}

inline LoaderOptions small_options(const std::vector<DatasetSpec>& datasets, std::int64_t seq_len = 63) {
  LoaderOptions o;
  o.datasets = datasets;
  o.seq_len = seq_len;
  o.seed = 1234;
  o.logical_shards = 16;
  o.shuffle_window = 8;
  o.batch_rows = 2;
  o.block_bytes = 4096;
  o.bos_id = kBos;
  o.eos_id = kEos;
  // ctest runs Data loader I's tests a second time with several tokenizing threads: nothing may change.
  if (const char* threads = std::getenv("LLMTRAIN_DATA_TEST_THREADS")) o.threads = std::atoi(threads);
  return o;
}

inline std::shared_ptr<const DocumentEncoder> byte_encoder() { return std::make_shared<ByteEncoder>(); }

constexpr std::uint64_t kVocab = 258;  // bytes + BOS + EOS

// The committed license corpus, pre-tokenized with the byte encoder into dir/licenses/.
inline PretokenizeReport pretokenize_licenses(const std::string& dir, int threads = 2) {
  LoaderOptions o = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  std::ostringstream log;
  return pretokenize(o, ByteEncoder(), kVocab, dir, threads, log);
}

// Every valid document of the configured datasets, with its encoding: the expectation of the tests.
struct Corpus {
  std::map<std::pair<std::string, std::uint64_t>, std::vector<TokenId>> docs;  // (file, offset) -> tokens
};

inline Corpus scan_corpus(const LoaderOptions& o, const DocumentEncoder& encoder) {
  Corpus c;
  TextExtractor extractor;
  for (const DatasetSpec& spec : o.datasets) {
    DatasetFiles ds = list_dataset(spec);
    for (std::size_t i = 0; i < ds.files.size(); ++i) {
      LoadedBlock b = read_block(ds.files[i], ShardBlock{static_cast<std::uint32_t>(i), 0, ds.files[i].size});
      for (const auto& r : b.records) {
        std::string_view text;
        std::string why;
        if (!extractor.extract(ds.files[i].format, std::string_view(b.data).substr(r.begin, r.end - r.begin),
                               spec.field, text, why))
          continue;
        document_tokens(ds.files[i].format, text, encoder, c.docs[{ds.files[i].path, r.offset}]);
      }
    }
  }
  return c;
}

// What was delivered: per (file, offset, epoch), how often each token was delivered; checks every row.
struct Coverage {
  std::map<std::tuple<std::string, std::uint64_t, std::uint32_t>, std::vector<int>> counts;
  std::int64_t specials = 0, rows = 0;
  TokenId bos = kBos, eos = kEos;

  void add(const Batch& batch, const std::vector<RowProvenance>& prov, const Corpus& corpus) {
    ASSERT_EQ(static_cast<std::int64_t>(prov.size()), batch.rows);
    for (std::int64_t r = 0; r < batch.rows; ++r, ++rows) {
      const TokenId* row = batch.row(r);
      const std::int32_t* doc_index = batch.doc_index.data() + r * batch.row_width();
      std::vector<bool> is_special(static_cast<std::size_t>(batch.row_width()), false);
      for (const auto& [pos, id] : prov[r].special) {
        ASSERT_TRUE(id == bos || id == eos);
        ASSERT_EQ(row[pos], id);
        is_special[static_cast<std::size_t>(pos)] = true;
        ++specials;
      }
      std::int64_t pos = 0;
      for (std::size_t s = 0; s < prov[r].spans.size(); ++s) {
        const SpanInfo& span = prov[r].spans[s];
        auto doc = corpus.docs.find({span.file, span.byte_offset});
        ASSERT_NE(doc, corpus.docs.end()) << span.file << " @" << span.byte_offset;
        std::vector<int>& count = counts[{span.file, span.byte_offset, span.epoch}];
        count.resize(doc->second.size());
        for (std::uint32_t t = span.token_begin; t < span.token_end; ++t) {
          while (pos < batch.row_width() && is_special[static_cast<std::size_t>(pos)]) ++pos;
          ASSERT_LT(pos, batch.row_width());
          ASSERT_EQ(row[pos], doc->second[t]) << span.file << " @" << span.byte_offset << " token " << t;
          ASSERT_EQ(doc_index[pos], static_cast<std::int32_t>(s));
          ++count[t];
          ++pos;
        }
      }
    }
  }

  // Every token of every document delivered exactly `times` times in `epoch`.
  void expect_exactly(const Corpus& corpus, std::uint32_t epoch, int times = 1) const {
    std::size_t checked = 0;
    for (const auto& [key, tokens] : corpus.docs) {
      auto it = counts.find({key.first, key.second, epoch});
      if (tokens.empty()) continue;
      ASSERT_NE(it, counts.end()) << "document never delivered: " << key.first << " @" << key.second;
      for (std::size_t t = 0; t < tokens.size(); ++t)
        ASSERT_EQ(it->second[t], times) << key.first << " @" << key.second << " token " << t << " epoch " << epoch;
      ++checked;
    }
    EXPECT_GT(checked, 0u);
  }
};

// W loaders of one run in one process.
struct World {
  std::vector<std::unique_ptr<Loader>> ranks;
  std::vector<std::vector<Batch>> batches;  // per rank
  std::vector<std::vector<std::vector<RowProvenance>>> provenance;

  World(const LoaderOptions& o, int world_size, const std::vector<std::string>& saved = {},
        std::shared_ptr<const DocumentEncoder> encoder = byte_encoder()) {
    for (int r = 0; r < world_size; ++r) {
      ranks.push_back(std::make_unique<Loader>(o, encoder, r, world_size));
      if (!saved.empty()) ranks.back()->restore(saved);
    }
    batches.resize(static_cast<std::size_t>(world_size));
    provenance.resize(static_cast<std::size_t>(world_size));
  }
  void step(Coverage* coverage = nullptr, const Corpus* corpus = nullptr) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      batches[r].push_back(ranks[r]->next());
      provenance[r].push_back(ranks[r]->last_provenance());
      if (coverage) coverage->add(batches[r].back(), provenance[r].back(), *corpus);
    }
  }
  void steps(int n, Coverage* coverage = nullptr, const Corpus* corpus = nullptr) {
    for (int i = 0; i < n; ++i) step(coverage, corpus);
  }
  // Steps until every rank has delivered everything of `epoch` (all datasets); returns the steps taken.
  int run_through_epoch(std::uint32_t epoch, Coverage* coverage, const Corpus* corpus, int max_steps = 100000) {
    int n = 0;
    while (n < max_steps && !past_epoch(epoch)) {
      step(coverage, corpus);
      ++n;
    }
    EXPECT_LT(n, max_steps);
    return n;
  }
  bool past_epoch(std::uint32_t epoch) const {
    for (const auto& r : ranks)
      for (const DatasetStats& d : r->stats().datasets)
        if (d.epoch <= epoch) return false;
    return true;
  }
  std::vector<std::string> states() const {
    std::vector<std::string> s;
    for (const auto& r : ranks) s.push_back(r->state());
    return s;
  }
};

// Steps a one-rank world on after `victim` was cut from `planned` to `found` bytes under it: "fail" must stop
// naming the file and both sizes, "skip" must count bad records of that file and of no other.
inline void expect_size_change_reported(World& w, BadRecordPolicy policy, const std::string& victim,
                                        std::uint64_t planned, std::uint64_t found) {
  const std::string expected = victim + ": size changed while the run reads it: planned " + std::to_string(planned) +
                               " bytes, found " + std::to_string(found);
  if (policy == BadRecordPolicy::fail) {
    try {
      w.steps(400);
      ADD_FAILURE() << "a truncated file was read on";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("The run stops"), std::string::npos) << e.what();
    }
    return;
  }
  w.steps(400);
  const LoaderStats st = w.ranks[0]->stats();
  auto it = st.bad_records_by_file.find(victim);
  ASSERT_NE(it, st.bad_records_by_file.end()) << "the truncation went unnoticed";
  EXPECT_GT(it->second, 0u);
  EXPECT_EQ(st.bad_records_by_file.size(), 1u);
}

}  // namespace llmtrain::data::testing
