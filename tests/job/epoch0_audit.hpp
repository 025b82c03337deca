// The exactly-once check of training runs over epoch 0, shared by the job and checkpoint probes: the
// provenance files (<dir>/provenance.rank<R>.jsonl, log.provenance) of one or more runs against a fresh
// single-rank pass over epoch 0 of the first dataset. Every document of that epoch must be delivered whole,
// each token once, and nothing else may claim epoch 0. Prints each problem and a summary line.
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "llmtrain/config/config.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/job/options.hpp"

namespace llmtrain::testing {

struct Epoch0Audit {
  int problems = 0;
  int rows = 0;          // provenance lines read
  std::size_t documents = 0;  // documents of epoch 0
};

inline Epoch0Audit audit_epoch0(const Config& config, const std::vector<std::filesystem::path>& run_dirs) {
  using Ranges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  using DocKey = std::pair<std::string, std::uint64_t>;  // file, byte offset
  Epoch0Audit result;
  std::map<DocKey, Ranges> docs;
  for (const auto& dir : run_dirs)
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().filename().string().rfind("provenance.rank", 0) != 0) continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line); ++result.rows) {
        const auto row = nlohmann::json::parse(line);
        for (const auto& span : row["spans"])
          if (span[3].get<std::uint32_t>() == 0)
            docs[{span[1].get<std::string>(), span[2].get<std::uint64_t>()}].push_back({span[4], span[5]});
      }
    }
  const auto encoder = std::make_shared<data::TokenizerEncoder>(tokenizer::Tokenizer::load(config.tokenizer.path));
  data::Loader loader(job::loader_options(config, config.data.datasets, encoder->tokenizer()), encoder, 0, 1);
  std::map<DocKey, std::uint32_t> length;
  while (loader.stats().datasets[0].epoch == 0) {
    loader.next();
    for (const auto& row : loader.last_provenance())
      for (const auto& s : row.spans)
        if (s.epoch == 0) length[{s.file, s.byte_offset}] = std::max(length[{s.file, s.byte_offset}], s.token_end);
  }
  result.documents = length.size();
  const auto report = [&result](const DocKey& key, const std::string& what) {
    ++result.problems;
    std::fprintf(stderr, "%s@%llu: %s\n", key.first.c_str(), static_cast<unsigned long long>(key.second), what.c_str());
  };
  for (const auto& [key, n] : length) {
    auto ranges = docs[key];
    std::sort(ranges.begin(), ranges.end());
    std::uint32_t covered = 0;
    for (const auto& [begin, end] : ranges) {
      if (begin != covered)
        report(key, "tokens [" + std::to_string(std::min(begin, covered)) + ", " + std::to_string(std::max(begin, covered)) +
                        ") " + (begin < covered ? "delivered twice" : "skipped"));
      covered = std::max(covered, end);
    }
    if (covered != n) report(key, std::to_string(covered) + " of " + std::to_string(n) + " tokens delivered");
  }
  for (const auto& [key, ranges] : docs)
    if (!length.count(key)) report(key, "not a document of epoch 0");
  return result;
}

}  // namespace llmtrain::testing
