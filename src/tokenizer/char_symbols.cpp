// See char_symbols.hpp: the isolated merge of one chunk and the check of the claim's condition.
#include "char_symbols.hpp"

#include <algorithm>

namespace llmtrain::tokenizer {

void CharSymbols::reset(std::size_t n_ids) {
  MinRanks none;
  none.after.fill(MergeTable::kNoRank);
  none.before.fill(MergeTable::kNoRank);
  min_ranks_.assign(n_ids, none);
  into_ = out_of_ = Neighbours{};
}

void CharSymbols::finish() {
  into_.finish(min_ranks_.size());
  out_of_.finish(min_ranks_.size());
}

void CharSymbols::Neighbours::finish(std::size_t n_ids) {
  begin.assign(n_ids + 1, 0);
  for (const auto& [id, entry] : added) ++begin[static_cast<std::size_t>(id) + 1];
  for (std::size_t i = 0; i < n_ids; ++i) begin[i + 1] += begin[i];
  entries.resize(added.size());
  std::vector<std::uint32_t> next(begin.begin(), begin.end() - 1);
  for (const auto& [id, entry] : added) entries[next[static_cast<std::size_t>(id)]++] = entry;
  added = {};
  // In rank order within each token (already so when merges are added in rank order), so that side() can stop
  // at the first merge that ranks above the chunk's own.
  for (std::size_t i = 0; i < n_ids; ++i) {
    const auto first = entries.begin() + begin[i], last = entries.begin() + begin[i + 1];
    if (!std::is_sorted(first, last)) std::sort(first, last);
  }
}

// Every merge in the file counts, also one overwritten by a later duplicate: a lower minimum only makes the
// check stricter.
void CharSymbols::add_merge(TokenId left, TokenId right, std::uint32_t rank, std::string_view left_bytes,
                            std::string_view right_bytes) {
  std::uint32_t& after = min_ranks_[right].after[kind_of(static_cast<unsigned char>(left_bytes.back())) - 1];
  after = std::min(after, rank);
  std::uint32_t& before = min_ranks_[left].before[kind_of(static_cast<unsigned char>(right_bytes.front())) - 1];
  before = std::min(before, rank);
  into_.added.emplace_back(right, std::uint64_t{rank} << 8 | static_cast<unsigned char>(left_bytes.back()));
  out_of_.added.emplace_back(left, std::uint64_t{rank} << 8 | static_cast<unsigned char>(right_bytes.front()));
}

// One side of the claim for a chunk whose own merges rank <= max_rank, and whose edges on that side are
// edges[0, n_edges): first per kind of neighbour byte; where a kind fails, byte by byte from the merges.
CharSymbols::Memo::Side CharSymbols::side(const std::vector<MinRanks>& min_ranks, bool left,
                                          const Neighbours& neighbours, const TokenId* edges, int n_edges,
                                          std::uint32_t max_rank) {
  Memo::Side side{};
  side.ok_kinds = 1;  // kind 0: no neighbour on that side
  for (int k = 1; k < kKinds; ++k) {
    bool ok = true;
    for (int j = 0; j < n_edges; ++j) {
      const MinRanks& m = min_ranks[static_cast<std::size_t>(edges[j])];
      ok = ok && (left ? m.after : m.before)[k - 1] > max_rank;
    }
    side.ok_kinds |= static_cast<std::uint8_t>(ok << k);
  }
  if (side.ok_kinds == (1 << kKinds) - 1) return side;
  for (int j = 0; j < n_edges; ++j) {
    const auto id = static_cast<std::size_t>(edges[j]);
    for (std::uint32_t i = neighbours.begin[id]; i < neighbours.begin[id + 1]; ++i) {
      if ((neighbours.entries[i] >> 8) > max_rank) break;  // the rest rank higher still
      const auto b = static_cast<std::uint8_t>(neighbours.entries[i] & 0xFF);
      if (std::find(side.bad.begin(), side.bad.begin() + side.n_bad, b) != side.bad.begin() + side.n_bad) continue;
      if (side.n_bad == side.bad.size()) {
        side.n_bad = Memo::Side::kMany;
        return side;
      }
      side.bad[side.n_bad++] = b;
    }
  }
  return side;
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
  e.left = side(min_ranks_, true, into_, left_edges.data(), steps + 1, max_rank);
  e.right = side(min_ranks_, false, out_of_, right_edges.data(), steps + 1, max_rank);
}

}  // namespace llmtrain::tokenizer
