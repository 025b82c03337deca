// Packing documents into rows (see packer.hpp).
#include "packer.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {

const std::vector<TokenId>& Packer::tokens_of(const DocRef& doc, const LoadDocument& load) {
  if (!cached_doc_ || !(*cached_doc_ == doc)) {
    cached_tokens_.clear();
    load(doc, cached_tokens_);
    cached_doc_ = doc;
  }
  return cached_tokens_;
}

void Packer::append(PackedRow& row, const Span& span, const std::vector<TokenId>& framed) {
  LLMTRAIN_CHECK(span.end <= framed.size(), "document at byte ", span.doc.byte_offset, " of file #", span.doc.file,
                 " has ", framed.size(), " tokens, fewer than the saved state expects (", span.end,
                 "): the corpus or the tokenizer changed");
  const std::uint32_t n_bos = bos_ ? 1 : 0;
  const std::uint32_t n_text = static_cast<std::uint32_t>(framed.size()) - n_bos - (eos_ ? 1 : 0);
  const std::int32_t index = static_cast<std::int32_t>(row.spans.size());
  // Specials can only be the first framed token (BOS) and the last (EOS); the rest is copied in bulk.
  const std::int64_t at = static_cast<std::int64_t>(row.tokens.size());
  const std::uint32_t last = static_cast<std::uint32_t>(framed.size()) - 1;
  if (span.begin < span.end) {
    if (bos_ && span.begin == 0) row.special.emplace_back(at, framed[0]);
    if (eos_ && span.end == framed.size())
      row.special.emplace_back(at + (last - span.begin), framed[last]);
  }
  row.tokens.insert(row.tokens.end(), framed.begin() + span.begin, framed.begin() + span.end);
  row.doc_index.insert(row.doc_index.end(), span.end - span.begin, index);
  auto text_pos = [&](std::uint32_t f) { return std::min(n_text, f > n_bos ? f - n_bos : 0); };
  row.spans.push_back(span);
  row.text.emplace_back(text_pos(span.begin), text_pos(span.end));
}

PackedRow Packer::pack(const DrawDocument& draw, const LoadDocument& load) {
  PackedRow row;
  row.tokens.reserve(static_cast<std::size_t>(width_));
  row.doc_index.reserve(static_cast<std::size_t>(width_));
  while (static_cast<std::int64_t>(row.tokens.size()) < width_) {
    if (queue.empty()) {
      DocRef doc;
      cached_tokens_.clear();
      LLMTRAIN_CHECK(draw(doc, cached_tokens_), "the data loader has no document left to read on this rank");
      cached_doc_ = doc;
      LLMTRAIN_CHECK(cached_tokens_.size() < UINT32_MAX, "document at byte ", doc.byte_offset,
                     " is too long (", cached_tokens_.size(), " tokens)");
      if (cached_tokens_.empty()) continue;
      queue.push_back({doc, 0, static_cast<std::uint32_t>(cached_tokens_.size())});
    }
    Span& front = queue.front();
    const std::vector<TokenId>& framed = tokens_of(front.doc, load);
    std::uint32_t room = static_cast<std::uint32_t>(width_ - static_cast<std::int64_t>(row.tokens.size()));
    std::uint32_t take = std::min(room, front.end - front.begin);
    append(row, {front.doc, front.begin, front.begin + take}, framed);
    front.begin += take;
    if (front.begin == front.end) queue.pop_front();
  }
  return row;
}

PackedRow Packer::rebuild(const std::vector<Span>& spans, const LoadDocument& load) {
  PackedRow row;
  for (const Span& span : spans) append(row, span, tokens_of(span.doc, load));
  LLMTRAIN_CHECK(static_cast<std::int64_t>(row.tokens.size()) == width_, "saved row holds ", row.tokens.size(),
                 " tokens, expected ", width_);
  return row;
}

}  // namespace llmtrain::data
