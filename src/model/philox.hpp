// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a counter-based
// generator. block(counter, key) is a keyed bijection of 128-bit counters, so any element of any stream is
// computed directly from its index, with no state carried from the elements before it. That is what lets
// every rank initialise its own slice of a parameter unit alone (init.cpp). Ten rounds pass TestU01
// BigCrush; it is the generator of cuRAND, JAX and PyTorch's CUDA backend for the same reason.
#pragma once

#include <array>
#include <cstdint>

namespace llmtrain::model {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

inline PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  constexpr std::uint64_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = kMul0 * c[0], p1 = kMul1 * c[2];
    c = {std::uint32_t(p1 >> 32) ^ c[1] ^ k[0], std::uint32_t(p1), std::uint32_t(p0 >> 32) ^ c[3] ^ k[1],
         std::uint32_t(p0)};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

}  // namespace llmtrain::model
