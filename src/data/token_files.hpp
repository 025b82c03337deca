// Pre-tokenized input: our own token file (.ltok) and Megatron-LM's indexed dataset (.bin + .idx), both read
// with pread (the index once per open file, the tokens once per block) and fed to the same shards, shuffling,
// packing, mixing and state as raw text.
//
// A document is a token range. Its stable key is the byte offset of its first token in the data file (.ltok
// or .bin), so token files are cut into blocks by byte range like JSON Lines: a document belongs to the block
// (and the logical shard) where its first token lies. A block hands its documents to the loader as records
// whose bytes are the tokens as little-endian uint32, whatever the file's dtype; they are framed with BOS/EOS
// like encoded text (see document_tokens() in records.hpp).
//
// .ltok layout, little-endian (docs/data-loader.md, "Pre-tokenized input"):
//   0  char[8] "LLMTOKS\0"      8 u32 version (1)     12 u32 dtype bytes (2: uint16, 4: uint32)
//  16  u64 vocab size          24 u64 documents      32 u64 tokens
//  40  u64 tokenizer fingerprint                      48 u64 checksum of the tokens and the offsets
//  56  u64 hash of bytes 0..56
//  64  tokens of all documents, back to back
//      (documents + 1) u64 token offsets of the document starts, the last one = tokens
// Structural damage (bad magic, sizes that do not add up, offsets out of range or out of order) is an error
// naming the file whatever on_bad_record says: a token file is a build product, and skipping it would drop all
// its documents. A file whose size changed (listed size against its size when opened, or a read that comes up
// short) is not damage: it goes to on_bad_record as a size change (LoadedBlock::size_changed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "records.hpp"

namespace llmtrain::data {

constexpr std::uint64_t kTokenFileHeaderBytes = 64;

// The documents starting in `range` of a token file (.ltok, or the .bin of a Megatron pair).
// Into the storage of `storage`, as read_block().
LoadedBlock read_token_block(const CorpusFile& file, const ShardBlock& range, LoadedBlock storage = {});
// The tokens (as little-endian uint32 bytes) of the document starting at `byte_offset`.
std::string read_token_record(const CorpusFile& file, std::uint64_t byte_offset);

// Writes an .ltok file document by document: to `path`.tmp, renamed to `path` by finish().
class TokenFileWriter {
 public:
  TokenFileWriter(std::string path, std::uint64_t vocab_size, std::uint64_t tokenizer_fingerprint);
  ~TokenFileWriter();  // removes the temporary file if finish() was not reached
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  void add(const std::vector<TokenId>& tokens);
  void finish();

 private:
  void write(const void* data, std::size_t n);

  std::string path_, tmp_;
  std::uint64_t vocab_size_, fingerprint_;
  std::uint32_t dtype_bytes_;
  std::vector<std::uint64_t> offsets_{0};
  std::uint64_t checksum_;
  std::FILE* out_ = nullptr;
  std::vector<unsigned char> buffer_;
};

// Checks an .ltok file completely (header, sizes, offsets, checksum). False with the reason in `why`.
bool verify_token_file(const std::string& path, std::uint64_t tokenizer_fingerprint, std::string& why);

}  // namespace llmtrain::data
