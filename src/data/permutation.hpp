// Keyed bijective permutations: the loader's shuffle without stored index arrays.
//
// A shard visits its blocks, and a block its documents, in the order i -> permute(i) of a permutation of
// [0, n) chosen by a key (seed, dataset, epoch, shard, block). The permutation is a 4-round Feistel network on
// the smallest even number of bits that covers n, restricted to [0, n) by cycle walking (apply again until the
// value falls inside). It is a bijection for every key, costs O(1) memory and O(1) expected time per index
// (the Feistel domain is below 4n, so under 4 rounds of walking on average), and a new key gives a new order.
#pragma once

#include <cstdint>

#include "llmtrain/core/hash.hpp"

namespace llmtrain::data {

class KeyedPermutation {
 public:
  KeyedPermutation(std::uint64_t n, std::uint64_t key) : n_(n), key_(key) {
    int bits = 2;
    while (bits < 64 && (std::uint64_t{1} << bits) < n) bits += 2;
    half_bits_ = bits / 2;
    half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  }

  // The i-th element of the permutation, for i < size().
  std::uint64_t operator()(std::uint64_t i) const {
    std::uint64_t x = feistel(i);
    while (x >= n_) x = feistel(x);  // cycle walking: stays on i's cycle, so the result is unique
    return x;
  }

 private:
  std::uint64_t feistel(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits_, right = x & half_mask_;
    for (std::uint64_t round = 0; round < 4; ++round) {
      std::uint64_t next = left ^ (hash_values({key_, round, right}) & half_mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t n_, key_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
};

}  // namespace llmtrain::data
