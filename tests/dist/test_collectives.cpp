// Every collective x element type x communicator (world and two splits) against a reference, at W = 1..4;
// requests in flight together on two sub-communicators; the rings' summation order on inexact sums;
// host-side agreement; bad inputs.
//
// Why the references can demand exact equality: float, double and bf16 test values are small multiples of
// powers of two, so every partial sum is exactly representable and every reduction order (the MPI library
// picks its own, by message size and rank count) gives the same bits; int64 sums are exact by nature, and
// use values beyond 2^53 so that a detour through double would show. bf16 rounding is tested in
// test_bf16_sum.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../random_floats.hpp"
#include "groups.hpp"
#include "ring_reference.hpp"
#include "llmtrain/core/bf16.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {
namespace {

using testing::Group;

template <DType D>
struct Elem;
template <>
struct Elem<DType::f32> {
  using T = float;
  static T value(int r, std::size_t i) { return float((r + 1) * (int(i % 13) - 6)) * 0.125f; }
  static T add(T a, T b) { return a + b; }
};
template <>
struct Elem<DType::f64> {
  using T = double;
  static T value(int r, std::size_t i) { return (r + 1) * std::ldexp(double(int(i % 29) - 14), -20) + std::ldexp(r, 20); }
  static T add(T a, T b) { return a + b; }
};
template <>
struct Elem<DType::i64> {
  using T = std::int64_t;
  static T value(int r, std::size_t i) {
    const T big = T(r + 1) << 58;
    return (i % 2 ? -big : big) + T(i) * 7 - 3 * r;
  }
  static T add(T a, T b) { return a + b; }
};
template <>
struct Elem<DType::bf16> {
  using T = std::uint16_t;  // small integers: every sum of four is exact in bf16
  static T value(int r, std::size_t i) { return bf16_from_float(float(int(i % 9) - 4 + r)); }
  static T add(T a, T b) { return bf16_from_float(bf16_to_float(a) + bf16_to_float(b)); }
};

// Bitwise comparison (a float -0 vs +0 would be a real difference here); reports the first mismatch only.
template <typename T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " is " << +got[i] << ", expected " << +want[i];
      return;
    }
}

// Each case runs on every group, with MPI's int chunking off (one MPI call per operation) and with chunks of
// 5 elements (several MPI requests per Request, the per-root path of all_gather, the rings' steps in pieces).
// Counts 2, 3 and 4 meet the group sizes: the all-reduce is a ring from as many elements as members, with
// blocks of one element at count = S and uneven blocks at 7 and 53.
struct Case {
  std::size_t max_chunk;
  std::vector<std::size_t> counts;
};
const std::vector<Case> kCases = {{kMpiMaxChunk, {0, 1, 2, 3, 4, 7, 53, 100003}}, {5, {0, 1, 3, 7, 53}}};

template <typename D>
class CollectivesExact : public ::testing::Test {};
using DTypes = ::testing::Types<std::integral_constant<DType, DType::f32>, std::integral_constant<DType, DType::bf16>,
                                std::integral_constant<DType, DType::f64>, std::integral_constant<DType, DType::i64>>;
TYPED_TEST_SUITE(CollectivesExact, DTypes);

template <DType D, typename Body>
void for_each_case(Body body) {
  for (const Case& c : kCases)
    for (Group& g : testing::groups(c.max_chunk))
      for (std::size_t count : c.counts)
        body(g, count, cat(dtype_name(D), " on ", g.label, ", chunk ", c.max_chunk, ", count ", count));
}

TYPED_TEST(CollectivesExact, AllReduceSum) {
  constexpr DType D = TypeParam::value;
  using E = Elem<D>;
  for_each_case<D>([](Group& g, std::size_t count, const std::string& what) {
    std::vector<typename E::T> data(count), want(count);
    for (std::size_t i = 0; i < count; ++i) {
      data[i] = E::value(g_runtime->rank(), i);
      want[i] = E::value(g.members[0], i);
      for (std::size_t m = 1; m < g.members.size(); ++m) want[i] = E::add(want[i], E::value(g.members[m], i));
    }
    g.comm->all_reduce_sum(data.data(), count, D).wait();
    expect_equal(data, want, what);
  });
}

TYPED_TEST(CollectivesExact, AllGather) {
  constexpr DType D = TypeParam::value;
  using E = Elem<D>;
  for_each_case<D>([](Group& g, std::size_t count, const std::string& what) {
    const std::size_t n = g.members.size();
    std::vector<typename E::T> in(count), out(n * count), want(n * count);
    for (std::size_t i = 0; i < count; ++i) in[i] = E::value(g_runtime->rank(), i);
    for (std::size_t m = 0; m < n; ++m)
      for (std::size_t i = 0; i < count; ++i) want[m * count + i] = E::value(g.members[m], i);
    g.comm->all_gather(in.data(), out.data(), count, D).wait();
    expect_equal(out, want, what);
  });
}

TYPED_TEST(CollectivesExact, ReduceScatterSum) {
  constexpr DType D = TypeParam::value;
  using E = Elem<D>;
  for_each_case<D>([](Group& g, std::size_t count, const std::string& what) {
    const std::size_t n = g.members.size(), block = std::size_t(g.comm->rank());
    std::vector<typename E::T> in(n * count), out(count), want(count);
    for (std::size_t i = 0; i < n * count; ++i) in[i] = E::value(g_runtime->rank(), i);
    for (std::size_t i = 0; i < count; ++i) {
      want[i] = E::value(g.members[0], block * count + i);
      for (std::size_t m = 1; m < n; ++m) want[i] = E::add(want[i], E::value(g.members[m], block * count + i));
    }
    g.comm->reduce_scatter_sum(in.data(), out.data(), count, D).wait();
    expect_equal(out, want, what);
  });
}

TYPED_TEST(CollectivesExact, BroadcastFromFirstAndLastMember) {
  constexpr DType D = TypeParam::value;
  using E = Elem<D>;
  for_each_case<D>([](Group& g, std::size_t count, const std::string& what) {
    for (int root : {0, g.comm->size() - 1}) {
      std::vector<typename E::T> data(count), want(count);
      for (std::size_t i = 0; i < count; ++i) {
        data[i] = E::value(g_runtime->rank(), i);
        want[i] = E::value(g.members[std::size_t(root)], i);
      }
      g.comm->broadcast(data.data(), count, D, root).wait();
      expect_equal(data, want, cat(what, ", root ", root));
    }
  });
}

// Random fp32 and fp64 values sum inexactly, so only the documented order (ring_reference.hpp) gives these
// bits; the all-reduce's result is then also the same on every member. Counts of at least S only: below it
// the all-reduce is libnbc's.
template <typename T>
void expect_ring_order(DType type) {
  for (const Case& c : kCases)
    for (Group& g : testing::groups(c.max_chunk))
      for (std::size_t count : {std::size_t(4), std::size_t(11), std::size_t(53), std::size_t(1001)}) {
        const int members = g.comm->size(), me = g.comm->rank();
        std::vector<std::vector<T>> inputs;  // by rank in the group, every member's, so every rank knows all
        for (int m = 0; m < members; ++m) {
          const auto f = llmtrain::testing::random_floats(count * std::size_t(members), 1000u + std::uint32_t(m), 1.0f);
          std::vector<T> values(f.size());
          for (std::size_t i = 0; i < f.size(); ++i) values[i] = T(f[i]) * T(1 + i % 7) / T(3);
          inputs.push_back(values);
        }
        const std::vector<T>& mine = inputs[std::size_t(me)];
        std::vector<T> reduced(mine.begin(), mine.begin() + std::ptrdiff_t(count)), scattered(count);
        g.comm->all_reduce_sum(reduced.data(), count, type).wait();
        g.comm->reduce_scatter_sum(mine.data(), scattered.data(), count, type).wait();
        std::vector<T> want_reduced(count), want_scattered(count);
        auto add = [](T a, T b) { return a + b; };
        for (std::size_t i = 0; i < count; ++i) {
          want_reduced[i] = testing::ring_sum(testing::all_reduce_block(i, count, members), members, i,
                                              [&](int m, std::size_t j) { return inputs[std::size_t(m)][j]; }, add);
          want_scattered[i] = testing::ring_sum(me, members, i, [&](int m, std::size_t j) {
            return inputs[std::size_t(m)][std::size_t(me) * count + j];
          }, add);
        }
        const std::string what = cat(dtype_name(type), " on ", g.label, ", chunk ", c.max_chunk, ", count ", count);
        expect_equal(reduced, want_reduced, "all_reduce_sum, " + what);
        expect_equal(scattered, want_scattered, "reduce_scatter_sum, " + what);
      }
}

TEST(CollectivesRing, InexactSumsFollowTheRingOrder) {
  expect_ring_order<float>(DType::f32);
  expect_ring_order<double>(DType::f64);
}

// Five operations in flight at once on the world and two sub-communicators that overlap it differently;
// even ranks complete them in reverse order of issue, odd ranks in order, all while polling progress().
TEST(CollectivesAsync, RequestsInFlightOnTwoSubCommunicatorsCompleteInAnyOrder) {
  const int me = g_runtime->rank(), world = g_runtime->size();
  auto all = make_collectives("mpi", *g_runtime);
  auto parity = all->split(me % 2, me);
  const bool low = me < (world + 1) / 2;
  auto half = all->split(low ? 0 : 1, -me);  // ranked in reverse
  std::vector<int> parity_members, half_members;
  for (int r = 0; r < world; ++r) {
    if (r % 2 == me % 2) parity_members.push_back(r);
    if ((r < (world + 1) / 2) == low) half_members.insert(half_members.begin(), r);
  }
  // Expectations only until every collective is issued: a rank returning early would leave the others waiting.
  EXPECT_EQ(parity->size(), int(parity_members.size()));
  EXPECT_EQ(half->size(), int(half_members.size()));
  if (half->size() == int(half_members.size())) {
    EXPECT_EQ(half_members[std::size_t(half->rank())], me);
  }

  const std::size_t n = 4099;
  using F = Elem<DType::f32>;
  using B = Elem<DType::bf16>;
  using D = Elem<DType::f64>;
  using L = Elem<DType::i64>;
  std::vector<float> sum_f(n);
  std::vector<std::uint16_t> mine_b(n), gathered_b(n * std::size_t(half->size()));
  std::vector<double> blocks_d(n * std::size_t(parity->size())), mine_d(n);
  std::vector<std::int64_t> bcast_l(n), sum_l(n);
  for (std::size_t i = 0; i < n; ++i) {
    sum_f[i] = F::value(me, i);
    mine_b[i] = B::value(me, i);
    bcast_l[i] = L::value(me, i);
    sum_l[i] = L::value(me, i);
  }
  for (std::size_t i = 0; i < blocks_d.size(); ++i) blocks_d[i] = D::value(me, i);

  std::vector<Request> requests;
  requests.push_back(parity->all_reduce_sum(sum_f.data(), n, DType::f32));
  requests.push_back(half->all_gather(mine_b.data(), gathered_b.data(), n, DType::bf16));
  requests.push_back(parity->reduce_scatter_sum(blocks_d.data(), mine_d.data(), n, DType::f64));
  requests.push_back(half->broadcast(bcast_l.data(), n, DType::i64, half->size() - 1));
  requests.push_back(all->all_reduce_sum(sum_l.data(), n, DType::i64));
  auto complete = [&](Request& r) {
    while (!r.test()) {
      parity->progress();
      half->progress();
      all->progress();
    }
  };
  if (me % 2 == 0)
    for (auto r = requests.rbegin(); r != requests.rend(); ++r) complete(*r);
  else
    for (Request& r : requests) complete(r);
  for (Request& r : requests) EXPECT_TRUE(r.test());  // stays complete
  ASSERT_FALSE(::testing::Test::HasFailure());

  const std::size_t block = std::size_t(parity->rank());
  for (std::size_t i = 0; i < n; ++i) {
    float f = 0;
    double d = 0;
    for (int r : parity_members) {
      f += F::value(r, i);
      d += D::value(r, block * n + i);
    }
    std::int64_t l = 0;
    for (int r = 0; r < world; ++r) l += L::value(r, i);
    ASSERT_EQ(sum_f[i], f) << "f32 all_reduce on rank % 2, element " << i;
    ASSERT_EQ(mine_d[i], d) << "f64 reduce_scatter on rank % 2, element " << i;
    ASSERT_EQ(sum_l[i], l) << "i64 all_reduce on the world, element " << i;
    ASSERT_EQ(bcast_l[i], L::value(half_members.back(), i)) << "i64 broadcast on a half, element " << i;
    for (std::size_t m = 0; m < half_members.size(); ++m)
      ASSERT_EQ(gathered_b[m * n + i], B::value(half_members[m], i)) << "bf16 all_gather on a half, member " << m;
  }
}

// A Request dropped before completion waits for it, so the buffer is final once it is gone; a moved-from
// Request is complete and a moved-to one still tracks the operation.
TEST(CollectivesAsync, DroppingAnIncompleteRequestWaitsForIt) {
  auto comm = make_collectives("mpi", *g_runtime);
  const int world = comm->size();
  std::vector<std::int64_t> data(1001, 2);
  { Request dropped = comm->all_reduce_sum(data.data(), data.size(), DType::i64); }
  EXPECT_EQ(std::count(data.begin(), data.end(), 2 * world), std::ptrdiff_t(data.size()));  // no early return
  Request first = comm->all_reduce_sum(data.data(), data.size(), DType::i64);
  Request moved = std::move(first);
  EXPECT_TRUE(first.test());  // NOLINT(bugprone-use-after-move): moved-from is defined as complete
  comm->progress();
  moved.wait();
  for (std::int64_t v : data) ASSERT_EQ(v, 2 * world * world);
}

TEST(CollectivesAgree, SumsAndMaximaOverTheSubCommunicator) {
  for (Group& g : testing::groups()) {
    const int me = g_runtime->rank();
    double sums[3] = {0.25 * me, 1.0, -std::ldexp(1.0, 40) * (me + 1)};
    double maxima[2] = {double(me), -1.5 - me};
    std::uint64_t wraps[2] = {std::numeric_limits<std::uint64_t>::max() - std::uint64_t(me), std::uint64_t(me) << 62};
    double want_sums[3] = {0, 0, 0}, want_max[2] = {-1e300, -1e300};
    std::uint64_t want_wraps[2] = {0, 0};
    for (int r : g.members) {
      want_sums[0] += 0.25 * r;
      want_sums[1] += 1.0;
      want_sums[2] += -std::ldexp(1.0, 40) * (r + 1);
      want_max[0] = std::max(want_max[0], double(r));
      want_max[1] = std::max(want_max[1], -1.5 - r);
      want_wraps[0] += std::numeric_limits<std::uint64_t>::max() - std::uint64_t(r);
      want_wraps[1] += std::uint64_t(r) << 62;
    }
    g.comm->agree_sum(sums, 3);
    g.comm->agree_max(maxima, 2);
    g.comm->agree_sum(wraps, 2);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(sums[k], want_sums[k]) << g.label << ", sum " << k;
    for (int k = 0; k < 2; ++k) EXPECT_EQ(maxima[k], want_max[k]) << g.label << ", max " << k;
    for (int k = 0; k < 2; ++k) EXPECT_EQ(wraps[k], want_wraps[k]) << g.label << ", uint64 sum " << k;
    g.comm->agree_sum(sums, 0);  // nothing to agree on is valid
  }
}

// Each message names what was wrong; every rank fails alike, before any communication.
template <typename F>
void expect_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing \"" << part << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// "auto" follows where the tensors live, not whether a GPU is visible: host tensors never reach NCCL.
TEST(CollectivesBackend, AutoFollowsWhereTheTensorsLive) {
  EXPECT_EQ(make_collectives("auto", *g_runtime, TensorPlace::host)->name(), "mpi");
  expect_error([] { make_collectives("nccl", *g_runtime, TensorPlace::host); }, "parallel.backend = \"nccl\"");
}

TEST(CollectivesBadInput, ClearErrors) {
  expect_error([] { make_collectives("gloo", *g_runtime); }, "unknown collectives backend \"gloo\" (expected auto, mpi or nccl)");
  expect_error([] { make_mpi_collectives(*g_runtime, 0); }, "MPI chunk size 0 is outside [1, INT_MAX]");
  auto comm = make_collectives("mpi", *g_runtime);
  EXPECT_EQ(comm->name(), "mpi");
  float x = 0;
  expect_error([&] { comm->broadcast(&x, 1, DType::f32, comm->size()); },
               cat("broadcast root ", comm->size(), " is not a member of a communicator of ", comm->size()));
  expect_error([&] { comm->broadcast(&x, 1, DType::f32, -1); }, "broadcast root -1");
  expect_error([&] { comm->split(-1, 0); }, "split color must be >= 0, got -1");
}

}  // namespace
}  // namespace llmtrain::dist
