// The corpus as the loader sees it at start-up: per dataset, the sorted list of files with their sizes and
// modification times. Listing is the only start-up work (no file is opened), so the first batch comes
// without any pass over the data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

// ltok: our token file; megatron: the .bin of a Megatron-LM .bin/.idx pair (token_files.hpp).
enum class FileFormat { jsonl, jsonl_gz, jsonl_zst, text, ltok, megatron };

struct CorpusFile {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;  // with size and mtime: tells a file replaced since the listing
  FileFormat format = FileFormat::jsonl;
  std::uint64_t start = 0;  // splittable files: offset of the first byte in the dataset's byte space (shards.hpp)
};

struct DatasetFiles {
  std::string name;
  std::string field;
  std::vector<CorpusFile> files;         // sorted by path, non-empty files only
  std::vector<std::string> empty_files;  // listed but empty: reported as bad input
  std::uint64_t total_bytes = 0;                // of all files (drift check)
  std::uint64_t split_bytes = 0;                // of the splittable files: the byte space the shards cut
  std::vector<std::uint32_t> whole_files;       // indices of the files read whole (.gz, .zst, .txt), in order
};

// The format a file name implies (.jsonl, .jsonl.gz, .jsonl.zst, .txt, .ltok, .bin), or false if it is not a
// corpus file.
bool corpus_format(const std::string& path, FileFormat& format);

inline bool is_token_format(FileFormat f) { return f == FileFormat::ltok || f == FileFormat::megatron; }

// JSON Lines and token files can be cut at any byte; compressed and plain-text files are read whole.
inline bool splittable(FileFormat f) { return f == FileFormat::jsonl || is_token_format(f); }

// Lists a dataset: a file, a directory (recursive) or a glob pattern. Fails if nothing matches.
DatasetFiles list_dataset(const DatasetSpec& spec);

}  // namespace llmtrain::data
