// The summation order of the MPI backend's rings (docs/collectives.md, "The MPI backend"), written out
// independently of it, so that tests can demand bit-identical results on inexact sums: a backend that
// added in another order, or rounded bf16 twice or not at all per hop, fails them.
//
// With S members, block b's sum starts with member b + 1's values and adds those of members b + 2, ...,
// b + S (= b) in turn, one rounding per addition. A reduce-scatter's block b is member b's output; an
// all-reduce of `count` >= S elements splits them into S blocks, the first count % S one element longer.
#pragma once

#include <cstddef>

namespace llmtrain::dist::testing {

// value(m, i): member m's (rank in the communicator) input i; add(a, b): one hop.
template <typename Value, typename Add>
auto ring_sum(int block, int members, std::size_t i, Value value, Add add) {
  auto acc = value((block + 1) % members, i);
  for (int k = 2; k <= members; ++k) acc = add(acc, value((block + k) % members, i));
  return acc;
}

// The block of an all-reduce's element i.
inline int all_reduce_block(std::size_t i, std::size_t count, int members) {
  const std::size_t base = count / std::size_t(members), longer = count % std::size_t(members);
  const std::size_t in_longer = longer * (base + 1);
  return int(i < in_longer ? i / (base + 1) : longer + (i - in_longer) / base);
}

}  // namespace llmtrain::dist::testing
