// BPE model: load-time tables (see bpe_model.hpp) and the encoding of one piece, following Hugging Face's
// BPE::merge_word for characters that are not in the vocabulary.
#include "bpe_model.hpp"

#include <cstdio>

#include "byte_level.hpp"
#include "llmtrain/core/error.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

constexpr std::size_t kMaxCachedPiece = 256;      // longer pieces are rare; caching them wastes memory
constexpr std::size_t kMaxCacheEntries = 1 << 17;  // cleared when full: about 10 MB per thread at most
const std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581, SentencePiece's word marker

// Appends the ids of `piece` (h: its hash_bytes) to `out` from `cache`, or as make() appends them, which the
// cache then keeps; pieces longer than kMaxCachedPiece are made every time.
template <class Make>
void through_cache(PieceCache& cache, std::string_view piece, std::uint64_t h, std::vector<TokenId>& out,
                   const Make& make) {
  if (piece.size() > kMaxCachedPiece) return make();
  if (cache.append(piece, h, out)) return;
  const std::size_t before = out.size();
  make();
  cache.insert(piece, h, out.data() + before, out.data() + out.size());
}

std::string utf8_of(std::uint32_t cp) {
  std::string s;
  unicode::append_utf8(s, cp);
  return s;
}

// Translates a byte-level token ("Ġhello") to the raw bytes it stands for, or nullopt if it contains a
// character outside the alphabet (such a token can never be produced from byte-level input).
std::optional<std::string> byte_level_bytes(const std::string& token) {
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  if (unicode::first_invalid(token) != token.size()) return std::nullopt;
  std::string bytes;
  for (std::size_t i = 0; i < token.size();) {
    int len = 0;
    const int b = alphabet.byte_of(unicode::decode(token.data() + i, &len));
    if (b < 0) return std::nullopt;
    bytes += static_cast<char>(b);
    i += static_cast<std::size_t>(len);
  }
  return bytes;
}

// The first two bytes of s (size >= 2), as an index.
std::size_t prefix2(std::string_view s) {
  return static_cast<std::size_t>(static_cast<unsigned char>(s[0])) << 8 | static_cast<unsigned char>(s[1]);
}

// True if some merged token has U+2581 right after another character (then pieces cannot be cut there).
bool builds_inner_metaspace(std::string_view token) {
  for (std::size_t p = token.find(kMetaspace, 1); p != std::string_view::npos; p = token.find(kMetaspace, p + 1)) {
    if (p < 3 || token.substr(p - 3, 3) != kMetaspace) return true;
  }
  return false;
}

}  // namespace

BpeModel::BpeModel(const std::vector<std::pair<std::string, TokenId>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, const BpeOptions& options,
                   const std::string& where)
    : options_(options) {
  TokenId max_id = -1;
  for (const auto& [token, id] : vocab) {
    LLMTRAIN_CHECK(id >= 0 && id <= kMaxTokenId, where, ": vocabulary token '", token, "' has id ", id,
                   " outside [0, ", kMaxTokenId, "]");
    max_id = std::max(max_id, id);
  }
  id_to_token_.assign(static_cast<std::size_t>(max_id + 1), std::string());
  if (options.ignore_merges) {
    max_token_len_.assign(1 << 16, 0);
    vocab_filter_.reset(vocab.size(), 8);
  }
  auto add_input = [&](const std::string& input, TokenId id) {  // a token in the model's input space
    vocab_.insert(input, static_cast<std::uint64_t>(id));
    if (!options.ignore_merges) return;
    vocab_filter_.add(hash_bytes(input.data(), input.size()));
    if (input.size() < 2) return;
    std::uint8_t& len = max_token_len_[prefix2(input)];
    len = static_cast<std::uint8_t>(std::max<std::size_t>(len, std::min<std::size_t>(input.size(), 255)));
  };
  for (const auto& [token, id] : vocab) {
    id_to_token_[static_cast<std::size_t>(id)] = token;
    file_vocab_.insert(token, static_cast<std::uint64_t>(id));
    if (!options.byte_level) {
      add_input(token, id);
    } else if (auto bytes = byte_level_bytes(token)) {
      add_input(*bytes, id);
    }
  }
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  for (std::uint32_t b = 0; b < 256; ++b) {
    const std::uint64_t* id = nullptr;
    if (options.byte_level) id = file_vocab_.find(utf8_of(alphabet.byte_to_char[b]));
    else if (b < 128) id = file_vocab_.find(std::string(1, static_cast<char>(b)));
    byte_ids_[b] = id ? static_cast<TokenId>(*id) : -1;
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const std::uint64_t* fallback = file_vocab_.find(name);
    fallback_ids_[b] = fallback ? static_cast<TokenId>(*fallback) : -1;
  }
  all_bytes_known_ = options.byte_level;
  for (TokenId id : byte_ids_) all_bytes_known_ = all_bytes_known_ && id >= 0;
  if (options.unk_token) {
    const std::uint64_t* id = file_vocab_.find(*options.unk_token);
    LLMTRAIN_CHECK(id, where, ": model.unk_token '", *options.unk_token, "' is not in the vocabulary");
    unk_id_ = static_cast<TokenId>(*id);
  }
  merges_.reserve(merges.size());
  if (all_bytes_known_) char_symbols_.reset(id_to_token_.size());
  bool inner_metaspace = false;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const std::uint64_t* a = file_vocab_.find(left);
    const std::uint64_t* b = file_vocab_.find(right);
    const std::string merged = left + right;
    const std::uint64_t* m = file_vocab_.find(merged);
    LLMTRAIN_CHECK(a && b && m, where, ": merge ", rank, " ('", left, "' '", right, "'): token '",
                   !a ? left : !b ? right : merged, "' is not in the vocabulary");
    merges_.insert(static_cast<TokenId>(*a), static_cast<TokenId>(*b),
                   {static_cast<std::uint32_t>(rank), static_cast<TokenId>(*m)});
    if (all_bytes_known_) {
      const std::optional<std::string> left_bytes = byte_level_bytes(left), right_bytes = byte_level_bytes(right);
      if (left_bytes && right_bytes && !left_bytes->empty() && !right_bytes->empty()) {
        boundary_filter_.add(*left_bytes, *right_bytes);
        char_symbols_.add_merge(static_cast<TokenId>(*a), static_cast<TokenId>(*b), static_cast<std::uint32_t>(rank),
                                *left_bytes, *right_bytes);
        cut_filter_.add(*left_bytes, *right_bytes);
      }
    }
    inner_metaspace = inner_metaspace || builds_inner_metaspace(merged);
  }
  if (all_bytes_known_) {
    char_symbols_.finish();
    cut_filter_.finish();
    std::vector<bool> is_character(id_to_token_.size(), false);
    for (const auto& [token, id] : vocab) {
      const std::optional<std::string> bytes = byte_level_bytes(token);
      is_character[static_cast<std::size_t>(id)] =
          bytes && bytes->size() >= 2 && static_cast<unsigned char>((*bytes)[0]) >= 0xC0 &&
          static_cast<std::size_t>(unicode::sequence_length(static_cast<unsigned char>((*bytes)[0]))) == bytes->size() &&
          unicode::first_invalid(*bytes) == bytes->size();
    }
    merges_.index_characters(is_character);
  }
  split_before_metaspace_ = !options.byte_level && !options.ignore_merges && !inner_metaspace &&
                            file_vocab_.find(kMetaspace) != nullptr;
}

std::optional<TokenId> BpeModel::token_to_id(std::string_view token) const {
  const std::uint64_t* id = file_vocab_.find(token);
  if (!id) return std::nullopt;
  return static_cast<TokenId>(*id);
}

std::uint64_t BpeModel::prefetch(std::string_view piece, const EncodeScratch& s) const {
  if (split_before_metaspace_) return 0;  // the parts are hashed and looked up one by one
  const std::uint64_t h = hash_bytes(piece.data(), piece.size());
  if (piece.size() <= kMaxCachedPiece) s.cache.prefetch(h);
  if (options_.ignore_merges) vocab_filter_.prefetch(h);
  return h;
}

// `hash`: prefetch()'s result for the piece.
void BpeModel::encode_piece(std::string_view piece, std::uint64_t hash, EncodeScratch& s,
                            std::vector<TokenId>& out) const {
  auto cached = [&](std::string_view part, std::uint64_t h) {
    through_cache(s.cache, part, h, out, [&] { encode_uncached(part, h, s, out); });
  };
  if (!split_before_metaspace_) {
    cached(piece, hash);
    return;
  }
  std::size_t start = 0;
  for (std::size_t p = piece.find(kMetaspace, 1); p != std::string_view::npos; p = piece.find(kMetaspace, p + 1)) {
    if (p >= 3 && piece.substr(p - 3, 3) == kMetaspace) continue;
    const std::string_view part = piece.substr(start, p - start);
    cached(part, hash_bytes(part.data(), part.size()));
    start = p;
  }
  const std::string_view last = piece.substr(start);
  cached(last, hash_bytes(last.data(), last.size()));
}

void BpeModel::encode_uncached(std::string_view piece, std::uint64_t hash, EncodeScratch& s,
                               std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  if (options_.ignore_merges &&
      (piece.size() == 1 || piece.size() >= 255 || piece.size() <= max_token_len_[prefix2(piece)]) &&
      vocab_filter_.may_contain(hash)) {
    if (const std::uint64_t* id = vocab_.find(piece, hash)) {
      out.push_back(static_cast<TokenId>(*id));
      return;
    }
  }
  if (all_bytes_known_) {
    encode_byte_level(piece, s, out);
    return;
  }
  s.word.clear();
  initial_symbols(piece, s.word);
  bpe_merge(s.word, merges_, s.merge);
  append_ids(out, s.word.data(), s.word.data() + s.word.size());
}

// Cuts the piece between whole non-ASCII characters where cut_filter_ allows, and merges the parts one by
// one, through their own cache: unlike the piece, a part is not looked up whole in the vocabulary first
// (ignore_merges), so its ids may differ from those of an equal piece. A part that is one character is what
// that character merges into alone, which its memo entry already holds: in scripts with few merges between
// characters (Llama-3's Ethiopic) most parts are one character, and hashing each and probing the parts
// cache cost more than merging the whole piece did.
void BpeModel::encode_byte_level(std::string_view piece, EncodeScratch& s, std::vector<TokenId>& out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const std::size_t n = piece.size();
  std::size_t start = 0;    // of the current part
  std::size_t prev = n;     // start of the previous character if it was a whole non-ASCII one, else n
  std::uint32_t prev_key = 0;
  auto flush = [&](std::size_t end) {
    const std::string_view part = piece.substr(start, end - start);
    if (start == prev) {  // the part is that one character
      const CharSymbols::Memo::Entry& e = character(part.data(), part.size(), s);
      if (e.count > 0) append_ids(out, e.ids.data(), e.ids.data() + e.count);
      else for (char b : part) out.push_back(byte_ids_[static_cast<unsigned char>(b)]);  // no merge applies
      return;
    }
    through_cache(s.parts, part, hash_bytes(part.data(), part.size()), out, [&] { merge_byte_level(part, s, out); });
  };
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = unicode::whole_char_length(p + i, n - i);
    if (len == 0) {
      prev = n;
      ++i;
      continue;
    }
    const std::uint32_t key = unicode::char_key(p + i, len);
    if (prev < n && cut_filter_.may_cut(prev_key, p[i - 1], key, p[i])) {
      flush(i);
      start = i;
    }
    prev = i;
    prev_key = key;
    i += len;
  }
  if (start == 0) {
    merge_byte_level(piece, s, out);  // not cut: the piece's own cache entry is enough
    return;
  }
  flush(n);
}

void BpeModel::merge_byte_level(std::string_view piece, EncodeScratch& s, std::vector<TokenId>& out) const {
  s.word.clear();
  byte_level_symbols(piece, s);
  bpe_merge(s.word, merges_, s.merge, &boundary_filter_, piece.data());
  append_ids(out, s.word.data(), s.word.data() + s.word.size());
}

void PieceCache::insert(std::string_view piece, std::uint64_t h, const TokenId* begin, const TokenId* end) {
  if (map_.size() >= kMaxCacheEntries) {
    map_.clear();
    ids_.clear();
  }
  map_.insert(piece, h, (std::uint64_t(ids_.size()) << 24) | static_cast<std::uint64_t>(end - begin));
  append_ids(ids_, begin, end);
}

// The starting symbols of a byte-level piece whose every byte has a symbol: its bytes, except that a UTF-8
// character is replaced by the symbols it merges into on its own where char_symbols.hpp's claim holds.
void BpeModel::byte_level_symbols(std::string_view piece, EncodeScratch& s) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const std::size_t n = piece.size();
  // At most one symbol per byte: sized once and written by index (push_back was an out-of-line call here).
  s.word.resize(n);
  s.merge.starts.resize(n + 1);
  TokenId* word = s.word.data();
  std::int32_t* starts = s.merge.starts.data();
  std::size_t m = 0;  // symbols so far
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = unicode::whole_char_length(p + i, n - i);
    if (len > 0) {
      const CharSymbols::Memo::Entry& e = character(piece.data() + i, len, s);
      const int left = i == 0 ? 0 : CharSymbols::kind_of(p[i - 1]);
      const int right = i + len == n ? 0 : CharSymbols::kind_of(p[i + len]);
      if (e.count > 0 && e.left.allows(left, i == 0 ? 0 : p[i - 1]) && e.right.allows(right, i + len == n ? 0 : p[i + len])) {
        std::size_t at = i;
        for (int k = 0; k < e.count; ++k, ++m) {
          word[m] = e.ids[k];
          starts[m] = static_cast<std::int32_t>(at);
          at += ((e.lengths >> (2 * k)) & 3u) + 1;
        }
        i += len;
        continue;
      }
    }
    word[m] = byte_ids_[p[i]];
    starts[m++] = static_cast<std::int32_t>(i);
    ++i;
  }
  starts[m] = static_cast<std::int32_t>(n);
  s.word.resize(m);
  s.merge.starts.resize(m + 1);
}

std::optional<TokenId> BpeModel::unit_id(std::string_view unit) const {
  if (unit.size() == 1) {
    const TokenId id = byte_ids_[static_cast<unsigned char>(unit[0])];
    if (id >= 0 || options_.byte_level) return id >= 0 ? std::optional<TokenId>(id) : std::nullopt;
  }
  const std::uint64_t* id = vocab_.find(unit);
  return id ? std::optional<TokenId>(static_cast<TokenId>(*id)) : std::nullopt;
}

// One symbol per unit (byte for byte-level models, character otherwise), as HF's BPE::merge_word does,
// including its handling of units missing from the vocabulary: byte fallback tokens "<0xXX>" if all exist,
// else the unknown token (consecutive ones fused if fuse_unk), else the unit is dropped.
void BpeModel::initial_symbols(std::string_view piece, std::vector<TokenId>& word) const {
  std::optional<TokenId> pending_unk;
  for (std::size_t i = 0; i < piece.size();) {
    const std::size_t len = options_.byte_level ? 1 : unicode::sequence_length(static_cast<unsigned char>(piece[i]));
    const std::string_view unit = piece.substr(i, len);
    i += len;
    if (std::optional<TokenId> id = unit_id(unit)) {
      if (pending_unk) word.push_back(*pending_unk);
      pending_unk.reset();
      word.push_back(*id);
      continue;
    }
    // The unit as HF sees it: byte-level units are the mapped character.
    const std::string mapped = options_.byte_level
                                   ? utf8_of(byte_level_alphabet().byte_to_char[static_cast<unsigned char>(unit[0])])
                                   : std::string(unit);
    if (options_.byte_fallback) {
      bool all = true;
      for (char c : mapped) all = all && fallback_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (char c : mapped) word.push_back(fallback_ids_[static_cast<unsigned char>(c)]);
        continue;  // HF leaves a pending unknown token pending here
      }
    }
    if (unk_id_) {
      if (pending_unk && !options_.fuse_unk) word.push_back(*pending_unk);
      pending_unk = unk_id_;
    }
  }
  if (pending_unk) word.push_back(*pending_unk);
}

}  // namespace llmtrain::tokenizer
