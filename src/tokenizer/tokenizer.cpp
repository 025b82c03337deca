// Tokenizer: runs the loaded pipeline. Encoding state (pre-token cache, buffers) lives in per-thread
// scratch keyed by the tokenizer's serial number, so const methods are safe to call from many threads and
// need no locks.
#include "llmtrain/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "llmtrain/core/error.hpp"
#include "tokenizer_impl.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

using KeptScratches = std::vector<std::pair<std::uint64_t, std::unique_ptr<EncodeScratch>>>;

// The calling thread's scratches, most recent first. The first use in a thread registers the list's destructor
// for thread exit (__cxa_thread_atexit), whose first call in a process binds symbols lazily across libstdc++,
// libc and ld.so: about 7 us of symbol lookups with cold caches, 6-9 % of a first encode of 6 KB. Loading a
// tokenizer makes that first use (finish_loading), so no encode pays the binding.
KeptScratches& kept_scratches() {
  thread_local KeptScratches kept;
  return kept;
}

// The scratch of the calling thread for tokenizer `serial`; a thread keeps a few, most recent first.
EncodeScratch& thread_scratch(std::uint64_t serial) {
  constexpr std::size_t kKept = 4;
  KeptScratches& kept = kept_scratches();
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].first == serial) {
      if (i != 0) std::rotate(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return *kept[0].second;
    }
  }
  if (kept.size() == kKept) kept.pop_back();
  kept.insert(kept.begin(), {serial, std::make_unique<EncodeScratch>()});
  return *kept[0].second;
}

// Encodes pieces a few pieces late: each piece is prefetched (BpeModel::prefetch) when it arrives and encoded
// kLag pieces later, so the cache misses of its table lookups overlap with the work on the pieces before it.
// Only pieces inside `text` are held back (a pre-tokenizer may pass views of its own buffers, valid during the
// call only); finish() encodes the rest.
struct ModelSink final : PieceSink {
  static constexpr std::size_t kLag = 4;
  const BpeModel& model;
  EncodeScratch& scratch;
  std::vector<TokenId>& out;
  std::string_view text;
  std::array<std::pair<std::string_view, std::uint64_t>, kLag> pending;  // a ring, oldest at `first`
  std::size_t first = 0, count = 0;
  ModelSink(const BpeModel& m, EncodeScratch& s, std::vector<TokenId>& o, std::string_view t)
      : model(m), scratch(s), out(o), text(t) {}
  void operator()(std::string_view piece, bool /*is_first*/) override {
    const auto begin = reinterpret_cast<std::uintptr_t>(text.data()), at = reinterpret_cast<std::uintptr_t>(piece.data());
    if (at < begin || at + piece.size() > begin + text.size()) {
      finish();
      model.encode_piece(piece, scratch, out);
      return;
    }
    const std::uint64_t hash = model.prefetch(piece, scratch);
    if (count == kLag) encode_oldest();
    pending[(first + count++) % kLag] = {piece, hash};
  }
  void finish() {
    while (count > 0) encode_oldest();
  }
  void encode_oldest() {
    model.encode_piece(pending[first].first, pending[first].second, scratch, out);
    first = (first + 1) % kLag;
    --count;
  }
};

// Pre-tokenizes and encodes one stretch of (normalized) text free of added tokens.
void encode_pieces(const Tokenizer::Impl& impl, std::string_view text, bool is_first, EncodeScratch& s,
                   std::vector<TokenId>& out) {
  ModelSink sink(*impl.model, s, out, text);
  if (impl.pre_tokenizer) impl.pre_tokenizer->split(text, is_first, sink);
  else if (!text.empty()) sink(text, is_first);
  sink.finish();
}

}  // namespace

void finish_loading(Tokenizer::Impl& impl) {
  impl.id_to_token = impl.model->id_to_token();
  std::vector<AddedToken> raw, normalized;
  for (const AddedToken& t : impl.added_tokens) {
    if (static_cast<std::size_t>(t.id) >= impl.id_to_token.size()) impl.id_to_token.resize(static_cast<std::size_t>(t.id) + 1);
    impl.id_to_token[static_cast<std::size_t>(t.id)] = t.content;
    (t.normalized && impl.normalizer ? normalized : raw).push_back(t);
  }
  for (std::size_t id = 0; id < impl.id_to_token.size(); ++id)
    if (!impl.id_to_token[id].empty()) impl.token_ids.insert(impl.id_to_token[id], id);
  impl.raw_added = AddedTokenMatcher(raw);
  impl.normalized_added = AddedTokenMatcher(normalized);
  kept_scratches();  // its first use binds symbols (above): here, not in the first encode
}

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

void Tokenizer::encode(std::string_view text, std::vector<TokenId>& out) const {
  const Impl& impl = *impl_;
  std::string repaired;
  if (unicode::first_invalid(text) != text.size()) {
    repaired = unicode::to_valid_utf8(text);
    text = repaired;
  }
  EncodeScratch& s = thread_scratch(impl.serial);
  impl.raw_added.split(text, [&](std::string_view part, TokenId id) {
    if (id >= 0) {
      out.push_back(id);
      return;
    }
    const bool is_first = part.data() == text.data();
    if (!impl.normalizer) {
      encode_pieces(impl, part, is_first, s, out);
      return;
    }
    s.text.assign(part.data(), part.size());
    impl.normalizer->normalize(s.text);
    const std::string_view normalized = s.text;
    impl.normalized_added.split(normalized, [&](std::string_view sub, TokenId sub_id) {
      if (sub_id >= 0) out.push_back(sub_id);
      else encode_pieces(impl, sub, is_first && sub.data() == normalized.data(), s, out);
    });
  });
}

std::vector<TokenId> Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 8);
  encode(text, out);
  return out;
}

std::vector<TokenId> Tokenizer::encode_with_special_tokens(std::string_view text) const {
  std::vector<TokenId> out(impl_->prefix);
  encode(text, out);
  out.insert(out.end(), impl_->suffix.begin(), impl_->suffix.end());
  return out;
}

std::string Tokenizer::decode(const TokenId* ids, std::size_t n) const {
  const Impl& impl = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const TokenId id = ids[i];
    LLMTRAIN_CHECK(id >= 0 && static_cast<std::size_t>(id) < impl.id_to_token.size() &&
                       !impl.id_to_token[static_cast<std::size_t>(id)].empty(),
                   impl.source, ": cannot decode id ", id, " at position ", i, ": not in the vocabulary");
    tokens.push_back(impl.id_to_token[static_cast<std::size_t>(id)]);
  }
  std::string text;
  if (!impl.decoder) {
    for (std::size_t i = 0; i < tokens.size(); ++i) (text += i ? " " : "") += tokens[i];
    return text;
  }
  impl.decoder->decode_chain(tokens);
  for (const std::string& t : tokens) text += t;
  return text;
}

std::string to_valid_utf8(std::string_view bytes) { return unicode::to_valid_utf8(bytes); }

std::size_t Tokenizer::vocab_size() const { return impl_->id_to_token.size(); }

std::optional<TokenId> Tokenizer::bos_id() const {
  if (impl_->prefix.size() != 1) return std::nullopt;
  return impl_->prefix[0];
}

std::optional<TokenId> Tokenizer::eos_id() const {
  if (impl_->suffix.size() != 1) return std::nullopt;
  return impl_->suffix[0];
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  const std::uint64_t* id = impl_->token_ids.find(token);
  if (!id) return std::nullopt;
  return static_cast<TokenId>(*id);
}

std::uint64_t Tokenizer::fingerprint() const { return impl_->fingerprint; }

}  // namespace llmtrain::tokenizer
