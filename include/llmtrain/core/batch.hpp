// The plain data that crosses from the data loader to the trainer: one batch of packed token rows.
//
// Each row holds seq_len + 1 tokens so that inputs are tokens[0..seq_len) and targets are the same row
// shifted by one. doc_index gives, per position, the index of the document the token came from within
// its row (0, 1, 2, ... in order of appearance), so the model can mask attention across documents.
#pragma once

#include <cstdint>
#include <vector>

namespace llmtrain {

using TokenId = std::int32_t;

struct Batch {
  std::int64_t rows = 0;
  std::int64_t seq_len = 0;             // tokens per row are seq_len + 1
  std::vector<TokenId> tokens;          // rows * (seq_len + 1), row-major
  std::vector<std::int32_t> doc_index;  // rows * (seq_len + 1), same layout as tokens

  std::int64_t row_width() const { return seq_len + 1; }
  const TokenId* row(std::int64_t r) const { return tokens.data() + r * row_width(); }
};

// Anything that hands out batches: the real loader, or a synthetic source in tests and benchmarks.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual Batch next() = 0;
  // The next batch into `batch`, whose storage the source may reuse and keep for later batches: what a caller
  // that takes one batch after another calls, so that a step allocates no batch (the loader's prefetch thread
  // assembles into storage handed back this way instead of allocating what the caller's thread then frees).
  virtual void next_into(Batch& batch) { batch = next(); }
};

}  // namespace llmtrain
