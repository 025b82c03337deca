// Packing documents into rows (see packer.hpp).
#include "packer.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {

const FramedDocument& Packer::framed_of(const DocRef& doc, const LoadDocument& load) {
  if (!cached_doc_ || !(*cached_doc_ == doc)) {
    cached_.tokens.clear();  // keeps its capacity for the next document
    cached_.length = 0;
    load(doc, cached_);
    cached_doc_ = doc;
  }
  return cached_;
}

void Packer::append(PackedRow& row, const Span& span, const FramedDocument& framed) {
  LLMTRAIN_CHECK(span.end <= framed.length, "document at byte ", span.doc.byte_offset, " of file #", span.doc.file,
                 " has ", framed.length, " tokens, fewer than the saved state expects (", span.end,
                 "): the corpus or the tokenizer changed");
  const std::uint32_t n_bos = bos_ ? 1 : 0;
  const std::uint32_t n_text = static_cast<std::uint32_t>(framed.length) - n_bos - (eos_ ? 1 : 0);
  // Specials can only be the first framed token (BOS) and the last (EOS), so their positions follow from the
  // length alone; the tokens, when there are any, are copied in bulk.
  const std::int64_t at = row.length;
  const std::uint32_t last = static_cast<std::uint32_t>(framed.length) - 1;
  if (span.begin < span.end) {
    if (bos_ && span.begin == 0) row.special.emplace_back(at, *bos_);
    if (eos_ && span.end == framed.length) row.special.emplace_back(at + (last - span.begin), *eos_);
  }
  if (!metadata_only_) {
    const std::int32_t index = static_cast<std::int32_t>(row.spans.size());
    row.tokens.insert(row.tokens.end(), framed.tokens.begin() + span.begin, framed.tokens.begin() + span.end);
    row.doc_index.insert(row.doc_index.end(), span.end - span.begin, index);
  }
  row.length += span.end - span.begin;
  auto text_pos = [&](std::uint32_t f) { return std::min(n_text, f > n_bos ? f - n_bos : 0); };
  row.spans.push_back(span);
  row.text.emplace_back(text_pos(span.begin), text_pos(span.end));
}

PackedRow Packer::pack(const DrawDocument& draw, const LoadDocument& load) {
  PackedRow row;
  if (!spare_.empty()) {
    row = std::move(spare_.back());
    spare_.pop_back();
  }
  if (!metadata_only_) {
    row.tokens.reserve(static_cast<std::size_t>(width_));
    row.doc_index.reserve(static_cast<std::size_t>(width_));
  }
  while (row.length < width_) {
    if (queue.empty()) {
      DocRef doc;
      cached_.tokens.clear();
      cached_.length = 0;
      LLMTRAIN_CHECK(draw(doc, cached_), "the data loader has no document left to read on this rank");
      cached_doc_ = doc;
      LLMTRAIN_CHECK(cached_.length < UINT32_MAX, "document at byte ", doc.byte_offset, " is too long (",
                     cached_.length, " tokens)");
      if (cached_.length == 0) continue;
      queue.push_back({doc, 0, static_cast<std::uint32_t>(cached_.length)});
    }
    Span& front = queue.front();
    const FramedDocument& framed = framed_of(front.doc, load);
    std::uint32_t room = static_cast<std::uint32_t>(width_ - row.length);
    std::uint32_t take = std::min(room, front.end - front.begin);
    append(row, {front.doc, front.begin, front.begin + take}, framed);
    front.begin += take;
    if (front.begin == front.end) queue.pop_front();
  }
  return row;
}

void Packer::recycle(std::vector<PackedRow>& rows) {
  for (PackedRow& row : rows) {
    row.length = 0;
    row.tokens.clear();
    row.doc_index.clear();
    row.spans.clear();
    row.text.clear();
    row.special.clear();
    spare_.push_back(std::move(row));
  }
  rows.clear();
}

PackedRow Packer::rebuild(const std::vector<Span>& spans, const LoadDocument& load) {
  PackedRow row;
  for (const Span& span : spans) append(row, span, framed_of(span.doc, load));
  LLMTRAIN_CHECK(row.length == width_, "saved row holds ", row.length,
                 " tokens, expected ", width_);
  return row;
}

}  // namespace llmtrain::data
