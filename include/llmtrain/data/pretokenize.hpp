// `llmtrain-data pretokenize`: turns the raw-text datasets of a configuration into llmtrain token files
// (.ltok, docs/data-loader.md "Pre-tokenized input"), one output file per input file, in parallel threads,
// resumably: an output that exists and verifies (header, sizes, checksum, same tokenizer) is kept.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "llmtrain/data/document_encoder.hpp"
#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

struct PretokenizeReport {
  std::uint64_t files_written = 0, files_kept = 0;  // kept: complete and verified from an earlier run
  std::uint64_t documents = 0, tokens = 0, bad_records = 0;  // of the files written now
};

// Input file F of dataset D goes to output_dir/D/R.ltok, R being F's path relative to the dataset's directory
// (its file name for a file or glob path). Documents keep the order of the input file; bad records follow
// options.on_bad_record. vocab_size picks 2- or 4-byte tokens. Progress lines go to `log`.
PretokenizeReport pretokenize(const LoaderOptions& options, const DocumentEncoder& encoder, std::uint64_t vocab_size,
                              const std::string& output_dir, int threads, std::ostream& log);

}  // namespace llmtrain::data
