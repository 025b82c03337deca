// Packing: documents -> rows of seq_len + 1 tokens, with no token lost or duplicated.
//
// Each document is framed as [BOS] tokens [EOS] (each special only when configured) and its framed tokens
// flow into rows back to back; a document runs across row boundaries. What is not yet in a row waits in a
// queue of spans (framed token ranges of documents): the front document's remainder, and after a restore,
// the pieces handed over from the saved state. A span refers to its document by DocRef, so the queue is
// saved as references, and a document's tokens are recomputed by re-encoding it (encoding is deterministic).
//
// Metadata-only packing (LoaderOptions::metadata_only) runs the same code on framed lengths alone: rows get
// the same spans, text ranges and special-token positions, but no token is copied into them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "shard_stream.hpp"

namespace llmtrain::data {

struct Span {
  DocRef doc;
  std::uint32_t begin = 0;  // framed token range [begin, end)
  std::uint32_t end = 0;
};

struct PackedRow {
  std::int64_t length = 0;                                    // tokens packed; 0: spans only, to rebuild
  std::vector<TokenId> tokens;                                // seq_len + 1; empty when metadata-only
  std::vector<std::int32_t> doc_index;                        // per token: index of its span in `spans`
  std::vector<Span> spans;                                    // in row order
  std::vector<std::pair<std::uint32_t, std::uint32_t>> text;  // per span: range in the unframed encoding
  std::vector<std::pair<std::int64_t, TokenId>> special;      // (position, id) of BOS / EOS tokens
};

// A document as the packer needs it: its framed length, and its framed tokens unless packing metadata-only.
struct FramedDocument {
  std::vector<TokenId> tokens;  // [BOS] text [EOS]; left empty when metadata-only
  std::size_t length = 0;       // framed tokens, always set
};

// Supplies a new document (its reference and framed tokens); false when there is none.
using DrawDocument = std::function<bool(DocRef&, FramedDocument&)>;
// Recomputes the framed tokens of a known document.
using LoadDocument = std::function<void(const DocRef&, FramedDocument&)>;

class Packer {
 public:
  Packer(std::int64_t row_width, std::optional<TokenId> bos, std::optional<TokenId> eos, bool metadata_only)
      : width_(row_width), bos_(bos), eos_(eos), metadata_only_(metadata_only) {}

  // The next full row: queued spans first, then new documents.
  PackedRow pack(const DrawDocument& draw, const LoadDocument& load);
  // Rebuilds a row from its spans (restoring a saved shuffle window).
  PackedRow rebuild(const std::vector<Span>& spans, const LoadDocument& load);
  // Takes back the storage of rows that are done with (assembled into a batch): pack() fills it again, so a
  // steady run allocates no row. Leaves `rows` empty.
  void recycle(std::vector<PackedRow>& rows);

  std::deque<Span> queue;  // pieces waiting to be packed, in order

 private:
  void append(PackedRow& row, const Span& span, const FramedDocument& framed);
  const FramedDocument& framed_of(const DocRef& doc, const LoadDocument& load);

  std::int64_t width_;
  std::optional<TokenId> bos_, eos_;
  bool metadata_only_;
  std::optional<DocRef> cached_doc_;  // the document held in cached_
  FramedDocument cached_;
  std::vector<PackedRow> spare_;  // recycled rows: cleared, their capacity kept
};

inline bool operator==(const DocRef& a, const DocRef& b) {
  return a.dataset == b.dataset && a.file == b.file && a.byte_offset == b.byte_offset && a.epoch == b.epoch;
}

}  // namespace llmtrain::data
