// Reading: a block of a shard -> its bytes in memory and the records that start in it; a record -> its text.
//
// Records of JSON Lines are lines: a record starts at byte 0 or right after a '\n' and ends before the next
// '\n' (a trailing '\r' is dropped; blank lines are not records). A .txt file is one record, its whole content.
// Compressed files are decompressed whole: their byte offsets are offsets in the decompressed stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corpus.hpp"
#include "llmtrain/data/document_encoder.hpp"
#include "shards.hpp"

namespace llmtrain::data {

struct LoadedBlock {
  struct Record {
    std::uint64_t begin, end;  // into data
    std::uint64_t offset;      // the record's key: where it starts in the file (see DocRef::byte_offset)
  };
  std::string data;
  std::uint64_t data_offset = 0;  // file offset of data[0]
  std::vector<Record> records;
  std::string error;  // set when the file could not be read whole (unreadable, truncated stream)
  // The file's size differs from the one the schedule was planned with (its listing at start-up or resume):
  // it changed while the run reads it. `error` says so; no record is taken from it.
  bool size_changed = false;

  // Empties it for the next block, keeping the capacity of its storage.
  void reset() {
    data.clear();
    data_offset = 0;
    records.clear();
    error.clear();
    size_changed = false;
  }
};

// Reads a block and finds its records, into the storage of `storage` (a block done with, so that reading
// allocates nothing once capacities settle). Never throws for bad input of text files: problems land in `error`,
// and the records that could be read are kept. A damaged token file throws (token_files.hpp says why).
LoadedBlock read_block(const CorpusFile& file, const ShardBlock& block, LoadedBlock storage = {});

// Empty when `found_bytes` is the size the schedule was planned with, else what changed (for `error`).
std::string size_change(const CorpusFile& file, std::uint64_t found_bytes);

// What a size change means for the run, for an error or a warning: the planned and the found size are in the
// block's `error`; the shards were cut on the planned one, so the file's documents are no longer exactly once.
std::string size_change_consequence();

// The raw bytes of the one record starting at `byte_offset`. Throws if it cannot be read or the file's size
// changed since it was listed.
std::string read_record(const CorpusFile& file, std::uint64_t byte_offset);

// Turns a raw record into document text: the string `field` of a JSON object, or the file's text, checked
// to be valid UTF-8. One extractor per thread (it owns a parser).
// A document's tokens without BOS/EOS: the encoding of its text, or, for a token file, the record itself
// (little-endian int32 ids, as read_block and read_record give them).
void document_tokens(FileFormat format, std::string_view text, const DocumentEncoder& encoder,
                     std::vector<TokenId>& out);

class TextExtractor {
 public:
  TextExtractor();
  ~TextExtractor();
  // False for a bad record, with the reason in `why`. `text` stays valid until the next call.
  bool extract(FileFormat format, std::string_view raw, const std::string& field, std::string_view& text,
               std::string& why);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace llmtrain::data
