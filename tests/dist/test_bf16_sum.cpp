// bf16 sums as docs/collectives.md defines them: bf16 on the wire, each reduction hop adds two operands in
// fp32 and rounds once to bf16 (nearest, ties to even; NaN stays NaN).
//  - rounding: values built so that exactly one hop is inexact, whatever order MPI picks, checked bit for bit
//    (truncation or ties-away-from-zero fail it);
//  - the error bound that follows from the definition, checked on random bf16 values: with W members a
//    result passes through at most W - 1 hops, each with relative error <= u = 2^-8 of its partial sum, so
//    |result - exact| <= ((1 + u)^(W-1) - 1) * sum |x|;
//  - the rings' order with one rounding per hop (ring_reference.hpp), bit for bit on the same random values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "groups.hpp"
#include "llmtrain/core/bf16.hpp"
#include "ring_reference.hpp"

namespace llmtrain::dist {
namespace {

using testing::Group;

bool is_nan(std::uint16_t v) { return (v & 0x7fffu) > 0x7f80u; }

// Member 0 holds a, member 1 holds b, the others 0: adding 0 is exact, so the one inexact hop is a + b and
// the result is round(a + b) in any reduction order.
struct Pair {
  std::uint16_t a, b, sum;
};
const std::vector<Pair> kPairs = {
    {0x3f80, 0x3b00, 0x3f80},  // 1 + 2^-9: below half a step
    {0x3f80, 0x3b80, 0x3f80},  // 1 + 2^-8: tie, to even (down)
    {0x3f80, 0x3c40, 0x3f82},  // 1 + 3 * 2^-8: tie, to even (up)
    {0x3f80, 0x3c20, 0x3f81},  // 1 + 5 * 2^-9: below the tie at 1 + 6 * 2^-9
    {0x3f80, 0xbb00, 0x3f80},  // 1 - 2^-9: tie between 1 - 2^-8 and 1, to even (1)
    {0x3f80, 0xbbc0, 0x3f7e},  // 1 - 3 * 2^-9: tie, to even (1 - 2^-7)
    {0xbf80, 0xbc40, 0xbf82},  // -1 - 3 * 2^-8: symmetric
    {0x7f7f, 0x7f7f, 0x7f80},  // largest finite twice: overflows to infinity
    {0x7f80, 0x3f80, 0x7f80},  // infinity stays
    {0x7f80, 0xff80, 0x7fc0},  // inf - inf: NaN
    {0x7fc1, 0x3f80, 0x7fc1},  // NaN stays NaN (compared as "is NaN")
};

TEST(Bf16Sum, EachHopRoundsOnceToNearestEven) {
  for (Group& g : testing::groups()) {
    if (g.members.size() < 2) continue;  // a group of one adds nothing
    const int pos = g.comm->rank();
    const std::size_t n = kPairs.size();
    std::vector<std::uint16_t> data(n, 0), blocks(n * g.members.size(), 0), scattered(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = pos == 0 ? kPairs[i].a : pos == 1 ? kPairs[i].b : 0;
    for (std::size_t block = 0; block < g.members.size(); ++block)
      std::copy(data.begin(), data.end(), blocks.begin() + std::ptrdiff_t(block * n));
    g.comm->all_reduce_sum(data.data(), n, DType::bf16).wait();
    g.comm->reduce_scatter_sum(blocks.data(), scattered.data(), n, DType::bf16).wait();
    for (std::size_t i = 0; i < n; ++i) {
      for (std::uint16_t got : {data[i], scattered[i]}) {
        if (is_nan(kPairs[i].sum))
          EXPECT_TRUE(is_nan(got)) << g.label << ", pair " << i;
        else
          EXPECT_EQ(got, kPairs[i].sum) << g.label << ", pair " << i << std::hex << ": got 0x" << got;
      }
    }
  }
}

// A bf16 value from (member, index) alone, so every rank can build every member's input: random sign,
// exponent in [-6, 6] and 7-bit mantissa (splitmix64 of the pair).
std::uint16_t random_bf16(int member, std::size_t i) {
  std::uint64_t z = (std::uint64_t(member) << 40) + i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const std::uint16_t sign = std::uint16_t((z & 1) << 15);
  const std::uint16_t exponent = std::uint16_t(127 - 6 + (z >> 8) % 13);
  return std::uint16_t(sign | (exponent << 7) | ((z >> 20) & 0x7f));
}

TEST(Bf16Sum, RandomSumsStayWithinTheBoundOfOneRoundingPerHop) {
  const std::size_t n = 20011;
  for (Group& g : testing::groups()) {
    const std::size_t w = g.members.size(), block = std::size_t(g.comm->rank());
    std::vector<std::uint16_t> data(n), blocks(w * n), scattered(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = random_bf16(g_runtime->rank(), i);
    for (std::size_t i = 0; i < w * n; ++i) blocks[i] = random_bf16(g_runtime->rank(), i);
    g.comm->all_reduce_sum(data.data(), n, DType::bf16).wait();
    g.comm->reduce_scatter_sum(blocks.data(), scattered.data(), n, DType::bf16).wait();
    const double growth = std::pow(1.0 + 0x1p-8, double(w - 1)) - 1.0;  // exact in double for w <= 4
    std::size_t rounded = 0, outside = 0;
    for (const auto& [result, offset] : {std::pair{&data, std::size_t(0)}, std::pair{&scattered, block * n}}) {
      for (std::size_t i = 0; i < n; ++i) {
        double exact = 0, magnitude = 0;  // exact: at most 4 values of 8 significant bits within 2^13
        for (int m : g.members) {
          exact += double(bf16_to_float(random_bf16(m, offset + i)));
          magnitude += std::fabs(double(bf16_to_float(random_bf16(m, offset + i))));
        }
        const double got = double(bf16_to_float((*result)[i]));
        if (got != exact) ++rounded;
        // Counted, not asserted: returning early would skip the next group's collectives on this rank only.
        if (std::fabs(got - exact) > growth * magnitude && outside++ == 0)
          ADD_FAILURE() << g.label << ", element " << i << ": exact " << exact << ", got " << got << ", bound "
                        << growth * magnitude;
      }
    }
    EXPECT_EQ(outside, 0u) << g.label << ": results outside the bound";
    if (w > 1) {
      EXPECT_GT(rounded, n / 4) << g.label << ": the data should exercise rounding";
    }
  }
}

// The same random values, now against the rings' exact order with a rounding after every hop: a ring that
// summed in fp32 across hops and rounded once at the end, or added in another order, differs here.
TEST(Bf16Sum, RingsRoundOncePerHopInTheirOrder) {
  const std::size_t n = 20011;
  auto add = [](std::uint16_t a, std::uint16_t b) { return bf16_from_float(bf16_to_float(a) + bf16_to_float(b)); };
  for (Group& g : testing::groups(5)) {
    const int members = g.comm->size(), me = g.comm->rank();
    std::vector<std::uint16_t> data(n), blocks(std::size_t(members) * n), scattered(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = random_bf16(g_runtime->rank(), i);
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = random_bf16(g_runtime->rank(), i);
    g.comm->all_reduce_sum(data.data(), n, DType::bf16).wait();
    g.comm->reduce_scatter_sum(blocks.data(), scattered.data(), n, DType::bf16).wait();
    auto input = [&](std::size_t offset) {
      return [&, offset](int m, std::size_t i) { return random_bf16(g.members[std::size_t(m)], offset + i); };
    };
    std::size_t wrong_reduced = 0, wrong_scattered = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (data[i] != testing::ring_sum(testing::all_reduce_block(i, n, members), members, i, input(0), add))
        ++wrong_reduced;
      if (scattered[i] != testing::ring_sum(me, members, i, input(std::size_t(me) * n), add)) ++wrong_scattered;
    }
    EXPECT_EQ(wrong_reduced, 0u) << g.label << ": all_reduce_sum elements off the ring's order";
    EXPECT_EQ(wrong_scattered, 0u) << g.label << ": reduce_scatter_sum elements off the ring's order";
  }
}

}  // namespace
}  // namespace llmtrain::dist
