// The BPE model of tokenizer.json ("model": {"type": "BPE", ...}): vocabulary, merges and the rules for
// characters missing from the vocabulary (byte_fallback, unk_token, fuse_unk), plus the per-thread
// pre-token cache that makes encoding fast.
//
// Byte-level models (a ByteLevel pre-tokenizer maps every byte to one printable character before BPE) are
// run directly on raw bytes: the vocabulary keys are translated back to bytes at load time, so encoding
// never builds the mapped string. Other models (SentencePiece-style, e.g. Mistral) run on UTF-8 characters.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bpe_merge.hpp"
#include "char_symbols.hpp"
#include "cut_filter.hpp"
#include "hash_tables.hpp"

namespace llmtrain::tokenizer {

// Ids must be below this (real vocabularies have under a million tokens); a larger id in a file is an
// error rather than a multi-gigabyte id -> token table.
constexpr TokenId kMaxTokenId = (1 << 24) - 1;

struct BpeOptions {
  bool byte_level = false;  // input pieces are raw bytes to be mapped by the ByteLevel alphabet
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  std::optional<std::string> unk_token;
};

// Appends [begin, end) to out. A piece has a few ids, and vector::insert copies them with an out-of-line call
// to memmove whose set-up cost more than the copy (3-5 % of encoding Chinese cold).
inline void append_ids(std::vector<TokenId>& out, const TokenId* begin, const TokenId* end) {
  for (; begin != end; ++begin) out.push_back(*begin);
}

// Byte string -> its ids, per thread; emptied when full.
class PieceCache {
 public:
  void prefetch(std::uint64_t h) const { map_.prefetch(h); }
  // h: hash_bytes of the piece. Appends its ids to out; false if the piece is not cached.
  bool append(std::string_view piece, std::uint64_t h, std::vector<TokenId>& out) const {
    const std::uint64_t* hit = map_.find(piece, h);
    if (!hit) return false;
    const TokenId* ids = ids_.data() + (*hit >> 24);
    append_ids(out, ids, ids + (*hit & 0xFFFFFF));
    return true;
  }
  void insert(std::string_view piece, std::uint64_t h, const TokenId* begin, const TokenId* end);

 private:
  StringMap map_;  // piece -> (offset << 24 | count) into ids_
  std::vector<TokenId> ids_;
};

// Per-thread state of one tokenizer: the pre-token cache and scratch buffers.
struct EncodeScratch {
  PieceCache cache;
  PieceCache parts;  // the parts of cut byte-level pieces (cut_filter.hpp): their ids without ignore_merges
  std::vector<TokenId> word;
  MergeScratch merge;
  CharSymbols::Memo chars;
  std::string text;            // normalized text of the current segment
};

class BpeModel {
 public:
  // vocab: (token, id) as in the file; merges: (left, right) token pairs in rank order. `where` names the
  // file for error messages.
  BpeModel(const std::vector<std::pair<std::string, TokenId>>& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, const BpeOptions& options,
           const std::string& where);

  // Appends the ids of one pre-tokenized piece.
  void encode_piece(std::string_view piece, EncodeScratch& scratch, std::vector<TokenId>& out) const {
    encode_piece(piece, prefetch(piece, scratch), scratch, out);
  }
  // The same in two steps: prefetch() hashes the piece and starts loading what its encode will read from
  // tables much larger than the caches (its pre-token cache slot, the vocabulary filter's word), so
  // a caller that prefetches the next piece before encoding the current one overlaps those misses with work.
  std::uint64_t prefetch(std::string_view piece, const EncodeScratch& scratch) const;
  void encode_piece(std::string_view piece, std::uint64_t hash, EncodeScratch& scratch,
                    std::vector<TokenId>& out) const;

  const std::vector<std::string>& id_to_token() const { return id_to_token_; }
  std::optional<TokenId> token_to_id(std::string_view token) const;

 private:
  void encode_uncached(std::string_view piece, std::uint64_t hash, EncodeScratch& scratch,
                       std::vector<TokenId>& out) const;
  void initial_symbols(std::string_view piece, std::vector<TokenId>& word) const;
  void byte_level_symbols(std::string_view piece, EncodeScratch& scratch) const;
  void encode_byte_level(std::string_view piece, EncodeScratch& scratch, std::vector<TokenId>& out) const;
  void merge_byte_level(std::string_view piece, EncodeScratch& scratch, std::vector<TokenId>& out) const;
  // The memo entry of the whole non-ASCII character bytes[0, len) (char_symbols.hpp), valid until the next call.
  const CharSymbols::Memo::Entry& character(const char* bytes, std::size_t len, EncodeScratch& scratch) const {
    return char_symbols_.chunk(bytes, static_cast<int>(len), merges_, byte_ids_, scratch.chars);
  }
  std::optional<TokenId> unit_id(std::string_view unit) const;

  BpeOptions options_;
  std::vector<std::string> id_to_token_;  // "" for ids not in the vocabulary
  StringMap file_vocab_;                  // token as written in the file -> id
  StringMap vocab_;                       // token in the model's input space (raw bytes if byte-level) -> id
  MergeTable merges_;
  std::array<TokenId, 256> byte_ids_;     // byte-level: id of each byte's character, -1 if missing
  std::array<TokenId, 256> fallback_ids_; // id of "<0xXX>", -1 if missing
  bool all_bytes_known_ = false;          // byte-level and every byte has an id: a piece's symbols are its bytes
  BoundaryFilter boundary_filter_;         // used when all_bytes_known_
  CharSymbols char_symbols_;               // used when all_bytes_known_
  CutFilter cut_filter_;                   // used when all_bytes_known_
  // ignore_merges: the longest vocabulary token (input space, capped at 255 bytes) starting with each pair of
  // bytes; a longer piece cannot be a token, which spares the vocabulary lookup (a cache miss) for most
  // pieces of unspaced scripts; of the shorter ones, most that are not tokens are ruled out by a Bloom filter
  // of the vocabulary (hash_bytes of each token).
  std::vector<std::uint8_t> max_token_len_;
  BloomFilter vocab_filter_;
  std::optional<TokenId> unk_id_;
  // SentencePiece-style files: no merge builds a token with U+2581 after another character, so a piece can
  // be split before each U+2581 (that follows a non-U+2581) without changing the result; the parts are cached.
  bool split_before_metaspace_ = false;
};

}  // namespace llmtrain::tokenizer
