// See char_symbols.hpp: the isolated merge of one chunk and the check of the claim's condition.
#include "char_symbols.hpp"

#include <algorithm>

namespace llmtrain::tokenizer {

void CharSymbols::reset(std::size_t n_ids) {
  for (auto* side : {&after_, &before_})
    for (std::vector<std::uint32_t>& v : *side) v.assign(n_ids, MergeTable::kNoRank);
}

// Every merge in the file counts, also one overwritten by a later duplicate: a lower minimum only makes the
// check stricter.
void CharSymbols::add_merge(TokenId left, TokenId right, std::uint32_t rank, std::string_view left_bytes,
                            std::string_view right_bytes) {
  std::uint32_t& after = after_[kind_of(static_cast<unsigned char>(left_bytes.back())) - 1][right];
  after = std::min(after, rank);
  std::uint32_t& before = before_[kind_of(static_cast<unsigned char>(right_bytes.front())) - 1][left];
  before = std::min(before, rank);
}

void CharSymbols::fill(Memo::Entry& e, std::uint32_t key, const char* bytes, int len, const MergeTable& merges,
                       const std::array<TokenId, 256>& byte_ids) const {
  e = Memo::Entry{};
  e.key = key;
  // The chunk alone, merged as bpe_merge does: lowest rank first, leftmost on ties.
  std::array<TokenId, 4> sym{}, width{};
  int n = len;
  for (int i = 0; i < n; ++i) {
    sym[i] = byte_ids[static_cast<unsigned char>(bytes[i])];
    width[i] = 1;
  }
  std::array<TokenId, 4> left_edges{sym[0]}, right_edges{sym[n - 1]};
  int steps = 0;
  std::uint32_t max_rank = 0;
  while (n > 1) {
    int best = -1;
    MergeTable::Merge merge{MergeTable::kNoRank, 0};
    for (int i = 0; i + 1 < n; ++i) {
      const MergeTable::Merge m = merges.find(sym[i], sym[i + 1]);
      if (m.rank < merge.rank) best = i, merge = m;
    }
    if (best < 0) break;
    sym[best] = merge.id;
    width[best] += width[best + 1];
    for (int i = best + 1; i + 1 < n; ++i) sym[i] = sym[i + 1], width[i] = width[i + 1];
    --n;
    max_rank = std::max(max_rank, merge.rank);
    ++steps;
    left_edges[steps] = sym[0];
    right_edges[steps] = sym[n - 1];
  }
  if (steps == 0) return;  // nothing to save: the bytes are the result
  e.count = static_cast<std::uint8_t>(n);
  for (int i = 0; i < n; ++i) {
    e.ids[i] = sym[i];
    e.lengths |= static_cast<std::uint8_t>((width[i] - 1) << (2 * i));
  }
  e.left_ok = e.right_ok = 1;  // kind 0: no neighbour on that side
  for (int k = 1; k < kKinds; ++k) {
    bool left = true, right = true;
    for (int j = 0; j <= steps; ++j) {
      left = left && after_[k - 1][left_edges[j]] > max_rank;
      right = right && before_[k - 1][right_edges[j]] > max_rank;
    }
    e.left_ok |= static_cast<std::uint8_t>(left << k);
    e.right_ok |= static_cast<std::uint8_t>(right << k);
  }
}

}  // namespace llmtrain::tokenizer
