// What a corpus looks like to the loader, without reading all of it: file counts and bytes from the listing,
// and documents and tokens per dataset estimated from a sample of blocks (`llmtrain-data inspect`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmtrain/data/document_encoder.hpp"
#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

struct DatasetSummary {
  std::string name;
  std::uint64_t files = 0, empty_files = 0, bytes = 0;
  std::uint64_t sampled_blocks = 0, sampled_bytes = 0, sampled_records = 0, sampled_bad = 0, sampled_tokens = 0;
  double estimated_documents = 0, estimated_tokens = 0;  // sampled rates x bytes: an estimate, not a count
};

// The paths of a dataset's corpus files as the loader lists them (a file, a directory walked recursively or a
// glob; empty files included). Fails like the loader when nothing matches.
std::vector<std::string> list_corpus_files(const DatasetSpec& spec);

// Samples up to `sample_blocks` blocks per dataset, spread evenly over its byte space.
std::vector<DatasetSummary> summarize_corpus(const LoaderOptions& options, const DocumentEncoder& encoder,
                                             int sample_blocks);

}  // namespace llmtrain::data
