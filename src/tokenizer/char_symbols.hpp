// Whole UTF-8 characters as the starting symbols of byte-level BPE, where that provably gives the same ids.
//
// Byte-level BPE starts from one symbol per byte, so each 3-byte CJK character costs two merges (pair
// lookups, scan or heap work) before the merges between characters can start, and triples the symbols the
// merge loop handles. For most characters those first merges happen in any context exactly as they do for
// the character alone, so a piece can start from the character's own result instead.
//
// Claim. Let chunk c (the bytes of one UTF-8 character in a piece) merge on its own into the symbols F by
// merges of rank <= M. Call the symbols that are leftmost (rightmost) in c at some step of that isolated
// run, F's first (last) included, c's left (right) edges. If every merge (X, e) with e a left edge and X
// ending in the byte before c has rank > M, and every merge (e, Y) with e a right edge and Y starting with
// the byte after c has rank > M, then BPE of the piece gives the same result when started with c already
// replaced by F. (No neighbour, at the piece's edge: nothing to check on that side.)
// Proof. T: the run from bytes; P: the run from F. (1) In T no merge joins a part of c with a symbol outside
// c before c has become F: such a merge pairs c's current left (right) edge with its neighbour, which ends
// with the byte before c (starts with the byte after it), at rank > M; yet a merge inside c of rank <= M is
// available until c is F (the pairs inside c are those of the isolated run, untouched by other merges), and
// BPE takes the lowest rank. So c becomes F exactly as in isolation, and T's other merges join symbols made of
// whole chunks. (2) P makes the same merges in the same order: when T merges symbols made of whole chunks,
// the pairs P has on top of T's join an edge of F of some chunk c not yet finished in T, so rank > M(c) by the
// condition, while T's choice ranks below c's next inner merge (<= M(c)); so P's lowest, leftmost pair is
// T's. When T stops every chunk has become its F (its inner merges stay available until then), the states
// agree, and P stops too. The chunking need not be valid UTF-8 for this; it is only what makes it pay.
//
// The condition is evaluated once per distinct chunk, for every possible byte before and after it, and
// memoised per thread: from per-token minimum ranks per kind of neighbour byte (ASCII, UTF-8 continuation,
// other) made at load, and where a kind fails, from the token's merges themselves, to find the few bytes that
// break it (e.g. katakana ア (E3 82 A2) after ー (E3 83 BC), whose token merges with E3 82 before ア's last
// merge; after other kana it is safe).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hash_tables.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {

class CharSymbols {
 public:
  // Kinds of neighbour byte: none (the piece's edge), ASCII, UTF-8 continuation byte, any other byte.
  static constexpr int kKinds = 4;
  static int kind_of(unsigned char b) { return b < 0x80 ? 1 : b < 0xC0 ? 2 : 3; }

  // Per-thread memo of chunks (direct-mapped by the chunk's bytes).
  class Memo {
   public:
    // For which neighbour bytes on one side the claim holds.
    // All-zero is an empty entry (the memo is a LazyZeroedArray).
    struct Side {
      static constexpr std::uint8_t kMany = 4;
      std::uint8_t ok_kinds;  // bit k: for every byte of kind k (bit 0: no neighbour, always set)
      std::uint8_t n_bad;     // if <= 3: it fails exactly for the bytes bad[0, n_bad); kMany: for more
      std::array<std::uint8_t, 3> bad;
      bool allows(int kind, unsigned char b) const {
        if ((ok_kinds >> kind) & 1) return true;
        if (n_bad == kMany) return false;
        for (int i = 0; i < n_bad; ++i)
          if (bad[i] == b) return false;
        return true;
      }
    };
    struct Entry {
      std::uint32_t key;  // unicode::char_key of the chunk (0: empty; a chunk starts >= 0xC0)
      std::array<TokenId, 3> ids;
      std::uint8_t count;    // symbols in F; 0: start from the bytes
      std::uint8_t lengths;  // byte length - 1 of F's symbols, two bits each
      Side left, right;
    };
    // Indexed by the chunk's code point, folded: a script's characters share a few pages of the memo.
    Entry& slot(std::uint32_t key) {
      const std::uint32_t cp = unicode::key_code_point(key);
      return entries_[(cp ^ (cp >> kBits) ^ (cp >> (2 * kBits))) & (kSize - 1)];
    }

   private:
    static constexpr int kBits = 13;
    static constexpr std::size_t kSize = std::size_t{1} << kBits;
    LazyZeroedArray<Entry, kSize> entries_;
  };

  // For the model's load: ids below n_ids, then every merge (left, right, rank) with the operands' bytes,
  // then finish().
  void reset(std::size_t n_ids);
  void add_merge(TokenId left, TokenId right, std::uint32_t rank, std::string_view left_bytes,
                 std::string_view right_bytes);
  void finish();

  // The memo entry of the chunk bytes[0, len), 2 <= len <= 4, computed on first use. byte_ids: each byte's
  // symbol.
  const Memo::Entry& chunk(const char* bytes, int len, const MergeTable& merges,
                           const std::array<TokenId, 256>& byte_ids, Memo& memo) const {
    const std::uint32_t key =
        unicode::char_key(reinterpret_cast<const unsigned char*>(bytes), static_cast<std::size_t>(len));
    Memo::Entry& e = memo.slot(key);
    if (e.key != key) fill(e, key, bytes, len, merges, byte_ids);
    return e;
  }

 private:
  // A token's merges on one side: (rank << 8 | the other operand's byte next to it), grouped by token.
  struct Neighbours {
    std::vector<std::pair<TokenId, std::uint64_t>> added;  // until finish()
    std::vector<std::uint32_t> begin;                      // token id -> its first entry; one past the end last
    std::vector<std::uint64_t> entries;
    void finish(std::size_t n_ids);
  };
  void fill(Memo::Entry& e, std::uint32_t key, const char* bytes, int len, const MergeTable& merges,
            const std::array<TokenId, 256>& byte_ids) const;
  // Per token, [kind - 1]: lowest rank of the merges with the token as right operand and a left operand
  // ending in a byte of that kind (after), or as left operand with a right one starting with such a byte
  // (before). Together, so that checking a token costs one cache line.
  struct MinRanks {
    std::array<std::uint32_t, kKinds - 1> after, before;
  };
  static Memo::Side side(const std::vector<MinRanks>& min_ranks, bool left, const Neighbours& neighbours,
                         const TokenId* edges, int n_edges, std::uint32_t max_rank);

  std::vector<MinRanks> min_ranks_;
  Neighbours into_, out_of_;  // the same merges one by one: the byte before (into_) or after (out_of_)
};

}  // namespace llmtrain::tokenizer
