// See bpe_merge.hpp. Both paths pick the same merge at every step: the valid pair with the smallest
// (rank, position), so they produce identical ids.
#include "bpe_merge.hpp"

#include <algorithm>

namespace llmtrain::tokenizer {
namespace {

constexpr std::size_t kShortWord = 32;
constexpr std::uint32_t kNoMerge = MergeTable::kNoRank;

// The symbols live in s.symbols while merging, each with its pair's lookup, so that removing one after a merge
// is one move of the entries behind it (four parallel arrays cost a memmove call each, 6 % of a cold
// Cyrillic encode's instructions). With a filter, symbol i is bytes[start of i, start of i + 1), the entry
// after the last holding the end.
void merge_short(std::vector<TokenId>& ids, const MergeTable& merges, MergeScratch& s, const BoundaryFilter* filter,
                 const char* bytes) {
  std::size_t n = ids.size();
  s.symbols.resize(n + 1);
  MergeScratch::Symbol* sym = s.symbols.data();
  for (std::size_t i = 0; i < n; ++i) sym[i].id = ids[i];
  if (filter)
    for (std::size_t i = 0; i <= n; ++i) sym[i].start = s.starts[i];
  // Inlined at its three call sites: the compiler kept it a call for the two after a merge, whose entry and
  // exit cost 1.4 % of a cold Llama-3 Cyrillic encode's instructions.
  auto rank_at = [&](std::size_t i) __attribute__((always_inline)) {
    if (filter && !filter->may_merge(bytes, static_cast<std::size_t>(sym[i + 1].start),
                                     static_cast<std::size_t>(sym[i + 2].start))) {
      sym[i].rank = kNoMerge;
      return;
    }
    const MergeTable::Merge m = s.pairs.find(merges, sym[i].id, sym[i + 1].id);
    sym[i].rank = m.rank;
    sym[i].new_id = m.id;
  };
  for (std::size_t i = 0; i + 1 < n; ++i) rank_at(i);
  while (n > 1) {
    // The lowest (rank, position) as one number: a branch-free minimum, where comparing ranks and keeping
    // the index mispredicted on most words (the position of the lowest rank is as good as random).
    std::uint64_t lowest = ~std::uint64_t{0};
    for (std::size_t i = 0; i + 1 < n; ++i) lowest = std::min(lowest, std::uint64_t{sym[i].rank} << 32 | i);
    const std::size_t best = lowest & 0xFFFFFFFFu;
    if (sym[best].rank == kNoMerge) break;
    sym[best].id = sym[best].new_id;
    for (std::size_t i = best + 1; i < n; ++i) sym[i] = sym[i + 1];
    --n;
    if (best > 0) rank_at(best - 1);
    if (best + 1 < n) rank_at(best);
  }
  ids.resize(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = sym[i].id;
}

// Heap ordered so that the top is the smallest (rank, pos).
bool later(const MergeScratch::Candidate& a, const MergeScratch::Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

// Symbol positions are indices into the original ids, so with a filter symbol pos is
// bytes[starts[pos], starts[next[pos]]) (starts[n] at the end).
std::size_t merge_long(std::vector<TokenId>& ids, const MergeTable& merges, MergeScratch& s, const BoundaryFilter* filter,
                       const char* bytes) {
  const std::int32_t n = static_cast<std::int32_t>(ids.size());
  s.prev.resize(n);
  s.next.resize(n);
  s.heap.clear();
  std::size_t pushes = 0;
  auto push = [&](std::int32_t pos) {
    const std::int32_t right = s.next[pos];
    if (right < 0) return;
    if (filter && !filter->may_merge(bytes, static_cast<std::size_t>(s.starts[right]),
                                     static_cast<std::size_t>(s.starts[s.next[right] < 0 ? n : s.next[right]])))
      return;
    const MergeTable::Merge m = s.pairs.find(merges, ids[pos], ids[right]);
    if (m.rank == kNoMerge) return;
    s.heap.push_back({m.rank, pos, m.id, ids[pos], ids[right]});
    std::push_heap(s.heap.begin(), s.heap.end(), later);
    ++pushes;
  };
  for (std::int32_t i = 0; i < n; ++i) {
    s.prev[i] = i - 1;
    s.next[i] = i + 1 < n ? i + 1 : -1;
  }
  for (std::int32_t i = 0; i + 1 < n; ++i) push(i);
  // ids[pos] == -1 marks a symbol merged into its left neighbour.
  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), later);
    const MergeScratch::Candidate top = s.heap.back();
    s.heap.pop_back();
    const std::int32_t right = s.next[top.pos];
    // Stale unless the pair now at pos is the pushed one: then its merge is the candidate's (no lookup
    // needed), and since every pair present has been pushed, the smallest valid candidate is the right merge.
    if (right < 0 || ids[top.pos] != top.left || ids[right] != top.right) continue;
    ids[top.pos] = top.id;
    ids[right] = -1;
    s.next[top.pos] = s.next[right];
    if (s.next[right] >= 0) s.prev[s.next[right]] = top.pos;
    if (s.prev[top.pos] >= 0) push(s.prev[top.pos]);
    push(top.pos);
  }
  ids.erase(std::remove(ids.begin(), ids.end(), -1), ids.end());
  return pushes;
}

}  // namespace

std::size_t bpe_merge(std::vector<TokenId>& ids, const MergeTable& merges, MergeScratch& scratch,
                      const BoundaryFilter* filter, const char* bytes) {
  if (ids.size() < 2) return 0;
  if (ids.size() <= kShortWord) {
    merge_short(ids, merges, scratch, filter, bytes);
    return 0;
  }
  return merge_long(ids, merges, scratch, filter, bytes);
}

}  // namespace llmtrain::tokenizer
