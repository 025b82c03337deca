// The BPE merge loop: repeatedly merge the adjacent pair with the lowest merge rank (leftmost on ties)
// until no pair has a merge. This is what Hugging Face's Word::merge_all computes.
//
// Short words (the common case) use a plain scan over a small array. Long words use a linked list plus a
// binary heap of candidate merges with lazy deletion, so a word of n symbols costs O(n log n): every merge
// removes one symbol and pushes at most two new candidates, so the heap sees at most 3n pushes.
#pragma once

#include <cstddef>
#include <vector>

#include "boundary_filter.hpp"
#include "hash_tables.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace llmtrain::tokenizer {

// Reused buffers so that merging allocates nothing once warm, and the memo of pair lookups: a scratch is
// used with one MergeTable only.
struct MergeScratch {
  struct Candidate {
    std::uint32_t rank;
    std::int32_t pos;
    std::int32_t id;
    std::int32_t left, right;  // the pair's ids when pushed: the candidate is stale once either changed
  };
  // The short path's symbols: id, first byte (with a filter), and the lookup of the pair it starts.
  struct Symbol {
    std::int32_t id, start;
    std::uint32_t rank;
    std::int32_t new_id;
  };
  std::vector<Symbol> symbols;
  std::vector<std::int32_t> prev, next;
  std::vector<std::int32_t> starts;  // with a filter: byte offset of each symbol, then the piece's length
  std::vector<Candidate> heap;
  PairMemo pairs;
};

// Merges `ids` in place. Returns the number of heap pushes (0 on the short path): tests use it to check
// that long inputs cost linear work. With a filter (byte-level models), symbol i must be the bytes
// bytes[scratch.starts[i], scratch.starts[i + 1]) (starts has ids.size() + 1 entries): pairs the filter rules
// out are not looked up.
std::size_t bpe_merge(std::vector<TokenId>& ids, const MergeTable& merges, MergeScratch& scratch,
                      const BoundaryFilter* filter = nullptr, const char* bytes = nullptr);

}  // namespace llmtrain::tokenizer
