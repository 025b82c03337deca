// Sampled corpus summary (see inspect.hpp). Compressed and text files are one block each, so a sample of
// them reads whole files; JSON Lines samples read block_bytes each.
#include "llmtrain/data/inspect.hpp"

#include <algorithm>

#include "corpus.hpp"
#include "records.hpp"
#include "shards.hpp"

namespace llmtrain::data {

std::vector<std::string> list_corpus_files(const DatasetSpec& spec) {
  const DatasetFiles ds = list_dataset(spec);
  std::vector<std::string> out = ds.empty_files;
  for (const CorpusFile& f : ds.files) out.push_back(f.path);
  return out;
}

std::vector<DatasetSummary> summarize_corpus(const LoaderOptions& options, const DocumentEncoder& encoder,
                                             int sample_blocks) {
  std::vector<DatasetSummary> out;
  TextExtractor extractor;
  std::vector<TokenId> tokens;
  for (const DatasetSpec& spec : options.datasets) {
    DatasetFiles ds = list_dataset(spec);
    DatasetSummary s;
    s.name = spec.name;
    s.files = ds.files.size();
    s.empty_files = ds.empty_files.size();
    s.bytes = ds.total_bytes;
    // Blocks of evenly spaced logical shards of a partition into sample_blocks parts.
    const std::uint64_t parts = static_cast<std::uint64_t>(std::max(1, sample_blocks));
    for (std::uint64_t p = 0; p < parts; ++p) {
      std::vector<ShardBlock> blocks = shard_blocks(ds, parts, p, static_cast<std::uint64_t>(options.block_bytes));
      if (blocks.empty()) continue;
      const ShardBlock& b = blocks.front();
      const CorpusFile& file = ds.files[b.file];
      LoadedBlock block = read_block(file, b);
      ++s.sampled_blocks;
      s.sampled_bytes += b.end - b.begin;
      for (const auto& r : block.records) {
        std::string_view text;
        std::string why;
        ++s.sampled_records;
        if (!extractor.extract(file.format, std::string_view(block.data).substr(r.begin, r.end - r.begin),
                               spec.field, text, why)) {
          ++s.sampled_bad;
          continue;
        }
        tokens.clear();
        document_tokens(file.format, text, encoder, tokens);
        s.sampled_tokens += tokens.size();
      }
    }
    if (s.sampled_bytes > 0) {
      const double scale = static_cast<double>(s.bytes) / static_cast<double>(s.sampled_bytes);
      s.estimated_documents = static_cast<double>(s.sampled_records - s.sampled_bad) * scale;
      s.estimated_tokens = static_cast<double>(s.sampled_tokens) * scale;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace llmtrain::data
