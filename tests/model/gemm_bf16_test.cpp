// bf16 products through the one gemm dispatch: operands are rounded to bf16 (nearest even) and the product
// is accumulated in fp32. Checked against a double-precision product of the bf16-rounded operands (tight:
// only fp32 accumulation error) and against the fp32 product (within bf16 tolerance), for every
// transposition, alpha/beta, padded leading dimensions and shapes that are not multiples of a vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "llmtrain/core/error.hpp"
#include "isa/gemm_bf16_kernel.hpp"
#include "llmtrain/model/gemm.hpp"
#include "reused_operand.hpp"

namespace llmtrain::model {
namespace {

// Reference rounding, written independently of the dispatch: nearest bf16 by exhaustive choice between
// the two neighbours, ties to the even mantissa.
float round_bf16(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const std::uint32_t down = bits & 0xffff0000u, up = down + 0x10000u;
  float lo, hi;
  std::memcpy(&lo, &down, sizeof lo);
  std::memcpy(&hi, &up, sizeof hi);
  const double dlo = std::abs(double(x) - lo), dhi = std::abs(double(hi) - x);
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (down >> 16) % 2 == 0 ? lo : hi;
}

struct Case {
  Trans ta, tb;
  std::int64_t m, n, k;
  float alpha, beta;
};

// Element (i, j) of op(X) where X is stored row-major with leading dimension ld.
float at(const std::vector<float>& x, Trans t, std::int64_t i, std::int64_t j, std::int64_t ld) {
  return t == Trans::No ? x[std::size_t(i * ld + j)] : x[std::size_t(j * ld + i)];
}

using Product = void (*)(bool, bool, long, long, long, float, const float*, long, const float*, long, float, float*,
                         long);

// The product through gemm() (whichever the CPU gets), the AVX512_BF16 kernel where the CPU has it, and the
// emulation every CPU can run.
std::vector<std::pair<const char*, Product>> products() {
  std::vector<std::pair<const char*, Product>> out = {
      {"gemm", [](bool ta, bool tb, long m, long n, long k, float alpha, const float* a, long lda, const float* b,
                  long ldb, float beta, float* c, long ldc) {
         gemm<float>(ta ? Trans::Yes : Trans::No, tb ? Trans::Yes : Trans::No, m, n, k, alpha, a, lda, b, ldb, beta,
                     c, ldc, Precision::Bf16);
       }},
      // The same reusing B: the first call packs op(B) into the kept copy, the second (whose C is checked)
      // reads it.
      {"gemm, B reused", [](bool ta, bool tb, long m, long n, long k, float alpha, const float* a, long lda,
                            const float* b, long ldb, float beta, float* c, long ldc) {
         ReusedOperandB reuse;
         const ReusedOperandB::Promise promise(reuse, b);
         std::vector<float> first(c, c + (m - 1) * ldc + n);
         for (float* out : {first.data(), c})
           gemm_reusing_b(ta ? Trans::Yes : Trans::No, tb ? Trans::Yes : Trans::No, m, n, k, alpha, a, lda, b, ldb,
                          beta, out, ldc, Precision::Bf16, reuse);
       }},
      {"emulated", isa::gemm_bf16_emulated}};
  if (bf16_supported())
    out.emplace_back("avx512_bf16", [](bool ta, bool tb, long m, long n, long k, float alpha, const float* a,
                                       long lda, const float* b, long ldb, float beta, float* c, long ldc) {
      isa::gemm_bf16_avx512(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    });
  return out;
}

void check(const Case& c) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::int64_t a_rows = c.ta == Trans::No ? c.m : c.k, a_cols = c.ta == Trans::No ? c.k : c.m;
  const std::int64_t b_rows = c.tb == Trans::No ? c.k : c.n, b_cols = c.tb == Trans::No ? c.n : c.k;
  const std::int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = c.n + 2;  // padded: only op(X) may be read
  std::vector<float> a(std::size_t(a_rows * lda)), b(std::size_t(b_rows * ldb)), c0(std::size_t(c.m * ldc));
  for (auto& v : a) v = normal(rng);
  for (auto& v : b) v = normal(rng);
  for (auto& v : c0) v = normal(rng);
  // Reference in double on the rounded operands (op(A) row-major m x k, op(B) column-major: k per column).
  std::vector<double> ra(std::size_t(c.m * c.k)), rb(std::size_t(c.n * c.k));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t p = 0; p < c.k; ++p) ra[std::size_t(i * c.k + p)] = round_bf16(at(a, c.ta, i, p, lda));
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t p = 0; p < c.k; ++p) rb[std::size_t(j * c.k + p)] = round_bf16(at(b, c.tb, p, j, ldb));
  std::vector<double> want(std::size_t(c.m * c.n)), scale(want.size());
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (std::int64_t p = 0; p < c.k; ++p) {
        const double xy = ra[std::size_t(i * c.k + p)] * rb[std::size_t(j * c.k + p)];
        sum += xy;
        abs_sum += std::abs(xy);
      }
      const double c_in = c0[std::size_t(i * ldc + j)];
      want[std::size_t(i * c.n + j)] = c.alpha * sum + c.beta * c_in;
      scale[std::size_t(i * c.n + j)] = std::abs(c.alpha) * abs_sum + std::abs(c.beta * c_in) + 1e-30;
    }
  std::vector<float> c_fp32 = c0;
  gemm<float>(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, c_fp32.data(), ldc);
  for (const auto& [name, product] : products()) {
    SCOPED_TRACE(name);
    std::vector<float> c_bf16 = c0;
    product(c.ta == Trans::Yes, c.tb == Trans::Yes, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta,
            c_bf16.data(), ldc);
    double worst_exact = 0, worst_fp32 = 0, differs = 0;
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const double got = c_bf16[std::size_t(i * ldc + j)], fp32 = c_fp32[std::size_t(i * ldc + j)];
        const double w = want[std::size_t(i * c.n + j)], sc = scale[std::size_t(i * c.n + j)];
        worst_exact = std::max(worst_exact, std::abs(got - w) / sc);
        worst_fp32 = std::max(worst_fp32, std::abs(got - fp32) / sc);
        differs = std::max(differs, std::abs(got - fp32));
      }
    // fp32 accumulation of k products: a few ulp of 2^-24 times k at worst.
    EXPECT_LE(worst_exact, (4.0 * double(c.k) + 2.0) * 6e-8) << "not an fp32-accumulated product of bf16 operands";
    // bf16 operands carry 8 bits: each product is off by at most ~2 * 2^-9 relative.
    EXPECT_LT(worst_fp32, 2.0 * std::ldexp(1.0, -8)) << "farther from the fp32 product than bf16 rounding allows";
    if (c.k > 0) {
      EXPECT_GT(differs, 0.0) << "identical to fp32: the operands were not rounded";
    }
    // Padding of C is untouched.
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = c.n; j < ldc; ++j)
        EXPECT_EQ(c_bf16[std::size_t(i * ldc + j)], c0[std::size_t(i * ldc + j)]);
  }
}

TEST(GemmBf16, MatchesBf16RoundedProductForEveryTransposition) {
  for (Trans ta : {Trans::No, Trans::Yes})
    for (Trans tb : {Trans::No, Trans::Yes}) {
      SCOPED_TRACE(testing::Message() << "ta " << int(ta) << " tb " << int(tb));
      check({ta, tb, 37, 53, 71, 1.0f, 0.0f});
      check({ta, tb, 64, 17, 130, 0.5f, 1.0f});  // accumulate into C, as the weight gradients do
      check({ta, tb, 1, 96, 33, -2.0f, 0.25f});
      check({ta, tb, 197, 1030, 301, 1.0f, 1.0f});  // several blocks of every dimension, odd k
    }
}

TEST(GemmBf16, EmptyInnerDimensionScalesC) { check({Trans::No, Trans::Yes, 5, 7, 0, 1.0f, 0.5f}); }

TEST(GemmBf16, RoundsOperandsToNearestEven) {
  // 1 + 2^-8 lies halfway between bf16 1 and 1 + 2^-7: ties go to the even mantissa (1). 1 + 3 * 2^-8 lies
  // halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even). 1 + 2^-8 + 2^-20 is above halfway: rounds up.
  const float inputs[] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-20f, -(1.0f + 0x1p-8f)};
  const float expected[] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, -1.0f};
  const float nan = std::numeric_limits<float>::quiet_NaN(), one = 1.0f, big = 3.4e38f;
  for (const auto& [name, product] : products()) {
    SCOPED_TRACE(name);
    for (int i = 0; i < 4; ++i) {
      float c = 0;
      product(false, false, 1, 1, 1, 1.0f, &inputs[i], 1, &one, 1, 0.0f, &c, 1);
      EXPECT_EQ(c, expected[i]) << "input " << inputs[i];
    }
    float c = 0;
    product(false, false, 1, 1, 1, 1.0f, &nan, 1, &one, 1, 0.0f, &c, 1);
    EXPECT_TRUE(std::isnan(c)) << "a NaN operand must stay NaN, got " << c;
    product(false, false, 1, 1, 1, 1.0f, &big, 1, &one, 1, 0.0f, &c, 1);
    EXPECT_TRUE(std::isinf(c)) << "3.4e38 rounds up past the largest bf16, got " << c;
  }
}

// Our kernel sums each element over k in a fixed order whatever the row and column blocking, so a product
// cut into row panels (as the progress-polled dispatch cuts large ones) gives the same bits as the whole
// one; every path gives the same bits twice. Several k blocks and a row count that is no multiple of the register tile.
TEST(GemmBf16, RowPanelsGiveTheSameBits) {
  const long m = 203, n = 150, k = 700;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (Trans ta : {Trans::No, Trans::Yes})
    for (Trans tb : {Trans::No, Trans::Yes}) {
      SCOPED_TRACE(testing::Message() << "ta " << int(ta) << " tb " << int(tb));
      std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n)), c0(std::size_t(m * n));
      for (auto& v : a) v = normal(rng);
      for (auto& v : b) v = normal(rng);
      for (auto& v : c0) v = normal(rng);
      const long lda = ta == Trans::No ? k : m, ldb = tb == Trans::No ? n : k;
      for (const auto& [name, product] : products()) {
        SCOPED_TRACE(name);
        std::vector<float> whole = c0, again = c0, panels = c0;
        product(ta == Trans::Yes, tb == Trans::Yes, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 1.0f, whole.data(), n);
        product(ta == Trans::Yes, tb == Trans::Yes, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 1.0f, again.data(), n);
        for (long i0 = 0; i0 < m; i0 += 37) {  // op(A)'s rows i0.. are A's rows or its columns
          const long rows = std::min(37L, m - i0);
          const float* a_panel = ta == Trans::No ? a.data() + i0 * lda : a.data() + i0;
          product(ta == Trans::Yes, tb == Trans::Yes, rows, n, k, 0.5f, a_panel, lda, b.data(), ldb, 1.0f,
                  panels.data() + i0 * n, n);
        }
        EXPECT_EQ(0, std::memcmp(whole.data(), again.data(), whole.size() * sizeof(float))) << "not deterministic";
        // OpenBLAS's sgemm (behind the emulation) makes no such promise: its order changes with m.
        if (name == std::string("avx512_bf16") || (name == std::string("gemm") && bf16_supported())) {
          EXPECT_EQ(0, std::memcmp(whole.data(), panels.data(), whole.size() * sizeof(float)))
              << "row panels changed the summation order";
        }
        EXPECT_NE(0, std::memcmp(whole.data(), c0.data(), whole.size() * sizeof(float)));
      }
    }
}

// Under a Promise the matrix is packed once: products by it give the bits of products that pack it every
// time, whatever their A, and on AVX512_BF16 CPUs a change to it is not seen (the kept copy is what is read,
// the caller's promise). Each ReusedOperandB keeps its own copies: two owners promising two matrices at once
// each get theirs. After the Promise, the next one packs afresh though the matrix changed at the same address.
TEST(GemmBf16, ReusedOperandBPacksOncePerPromiseAndPerOwner) {
  const long m = 300, n = 1100, k = 520;  // several column and k blocks: every packed block has its place
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(std::size_t(m * k)), a2(a.size()), b(std::size_t(n * k)), b2(b.size());
  for (auto* x : {&a, &a2, &b, &b2})
    for (auto& v : *x) v = normal(rng);
  auto product = [&](const std::vector<float>& left, const std::vector<float>& right, ReusedOperandB* reuse) {
    std::vector<float> c(std::size_t(m * n));
    if (reuse)
      gemm_reusing_b(Trans::No, Trans::Yes, m, n, k, 1.0f, left.data(), k, right.data(), k, 0.0f, c.data(), n,
                     Precision::Bf16, *reuse);
    else
      gemm<float>(Trans::No, Trans::Yes, m, n, k, 1.0f, left.data(), k, right.data(), k, 0.0f, c.data(), n,
                  Precision::Bf16);
    return c;
  };
  const auto plain = product(a, b, nullptr), plain2 = product(a2, b, nullptr), other = product(a, b2, nullptr);
  ReusedOperandB reuse, reuse2;
  {
    const ReusedOperandB::Promise promise(reuse, b.data());
    const ReusedOperandB::Promise promise2(reuse2, b2.data());
    EXPECT_EQ(product(a, b, &reuse), plain);
    EXPECT_EQ(product(a, b2, &reuse2), other) << "the second owner was given the first one's copy";
    EXPECT_EQ(product(a2, b, &reuse), plain2);
    EXPECT_THROW(ReusedOperandB::Promise(reuse, b.data()), Error);
    b[7] += 1.0f;  // breaks the promise, to see which copy is read
    const auto stale = product(a, b, &reuse);
    if (bf16_supported()) EXPECT_EQ(stale, plain) << "the kept packed copy was not read";
    else EXPECT_NE(stale, plain) << "only the AVX512_BF16 kernel keeps a packed copy";
  }
  const auto changed = product(a, b, nullptr);
  EXPECT_NE(changed, plain);
  const ReusedOperandB::Promise promise(reuse, b.data());
  EXPECT_EQ(product(a, b, &reuse), changed) << "a new Promise must pack the matrix afresh (same address)";
}

// The packed copies are Kokkos host allocations (what the memory tracker behind mem.peak_bytes counts), one
// per transposition, kept while the next Promise uses them and freed when one does not or when the owner goes.
// Only the AVX512_BF16 kernel packs: elsewhere nothing is allocated.
namespace packed_bytes {
std::int64_t live = 0, allocations = 0;
void on_allocate(const Kokkos_Profiling_SpaceHandle, const char* label, const void*, const std::uint64_t size) {
  if (std::string(label) == "reused_operand_b") live += std::int64_t(size), allocations += 1;
}
void on_deallocate(const Kokkos_Profiling_SpaceHandle, const char* label, const void*, const std::uint64_t size) {
  if (std::string(label) == "reused_operand_b") live -= std::int64_t(size);
}
}  // namespace packed_bytes

TEST(GemmBf16, ReusedOperandBHoldsItsCopiesInKokkosAllocations) {
  Kokkos::Tools::Experimental::set_allocate_data_callback(packed_bytes::on_allocate);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(packed_bytes::on_deallocate);
  const long n = 300, k = 70;
  std::vector<float> a(std::size_t(n * k), 0.5f), b(std::size_t(n * k), 0.25f), c(std::size_t(n * n));
  // Bytes of op(B) packed for each product (2 per value); none where only the emulation runs.
  const std::int64_t packs = bf16_supported() ? 1 : 0, forward = packs * 2 * isa::gemm_bf16_packed_b_size(n, k),
                     backward = packs * 2 * isa::gemm_bf16_packed_b_size(k, n);
  {
    ReusedOperandB reuse;
    for (int pass = 0; pass < 2; ++pass) {  // the head's two products, twice: the copies are kept
      const ReusedOperandB::Promise promise(reuse, b.data());
      gemm_reusing_b(Trans::No, Trans::Yes, n, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n,
                     Precision::Bf16, reuse);
      gemm_reusing_b(Trans::No, Trans::No, k, k, n, 1.0f, a.data(), n, b.data(), k, 0.0f, c.data(), k,
                     Precision::Bf16, reuse);
      EXPECT_EQ(packed_bytes::live, forward + backward);
      EXPECT_EQ(packed_bytes::allocations, 2 * packs);
    }
    {
      const ReusedOperandB::Promise promise(reuse, b.data());
      gemm_reusing_b(Trans::No, Trans::Yes, n, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n,
                     Precision::Bf16, reuse);
    }
    EXPECT_EQ(packed_bytes::live, forward) << "the copy the last Promise did not use is kept";
  }
  EXPECT_EQ(packed_bytes::live, 0) << "the owner's copies outlive it";
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(nullptr);
}

TEST(GemmBf16, BadInput) {
  EXPECT_EQ(parse_precision("fp32"), Precision::Fp32);
  EXPECT_EQ(parse_precision("bf16"), Precision::Bf16);
  try {
    parse_precision("fp16");
    FAIL() << "fp16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.precision must be \"fp32\" or \"bf16\", got \"fp16\""),
              std::string::npos)
        << e.what();
  }
  const double x = 1, y = 1;
  double z = 0;
  EXPECT_THROW(gemm<double>(Trans::No, Trans::No, 1, 1, 1, 1.0, &x, 1, &y, 1, 0.0, &z, 1, Precision::Bf16), Error);
  // Reusing a packed B: a Promise needs a matrix, one at a time per owner, and products must multiply by it.
  const float p = 1, q = 2;
  float r = 0;
  ReusedOperandB reuse;
  EXPECT_THROW(ReusedOperandB::Promise(reuse, nullptr), Error);
  try {
    gemm_reusing_b(Trans::No, Trans::No, 1, 1, 1, 1.0f, &p, 1, &q, 1, 0.0f, &r, 1, Precision::Bf16, reuse);
    FAIL() << "a product reused B with no Promise alive";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("B is not the matrix promised to its ReusedOperandB"), std::string::npos)
        << e.what();
  }
  const ReusedOperandB::Promise promise(reuse, &q);
  EXPECT_THROW(gemm_reusing_b(Trans::No, Trans::No, 1, 1, 1, 1.0f, &q, 1, &p, 1, 0.0f, &r, 1, Precision::Bf16, reuse),
               Error);
  gemm_reusing_b(Trans::No, Trans::No, 1, 1, 1, 1.0f, &p, 1, &q, 1, 0.0f, &r, 1, Precision::Bf16, reuse);
  EXPECT_EQ(r, 2.0f);
}

}  // namespace
}  // namespace llmtrain::model
