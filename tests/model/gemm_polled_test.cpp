// Products that let communication progress inside them (gemm_host.cpp, isa/gemm_f32_avx512.cpp): fp32
// products under an installed poller (our AVX-512 kernel, or row panels without AVX-512) against a
// double-precision product, for every transposition, alpha/beta, padded leading dimensions and shapes that
// cross every block edge; both AVX-512 kernels call the poller after each block of rows without changing a
// bit; and gemm() under an installed poller runs the kernel (where there is one) and polls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "isa/gemm_bf16_kernel.hpp"
#include "isa/gemm_f32_kernel.hpp"
#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {
namespace {

struct Operands {
  long m, n, k, lda, ldb, ldc;
  bool ta, tb;
  std::vector<float> a, b, c;
};

// Random op(A) m x k and op(B) k x n stored with padded leading dimensions (only op(X) may be read) and C.
Operands operands(bool ta, bool tb, long m, long n, long k, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Operands o{m, n, k, (ta ? m : k) + 3, (tb ? k : n) + 5, n + 2, ta, tb, {}, {}, {}};
  o.a.resize(std::size_t((ta ? k : m) * o.lda));
  o.b.resize(std::size_t((tb ? n : k) * o.ldb));
  o.c.resize(std::size_t(m * o.ldc));
  for (auto* v : {&o.a, &o.b, &o.c})
    for (float& x : *v) x = normal(rng);
  return o;
}

float a_at(const Operands& o, long i, long p) { return o.ta ? o.a[std::size_t(p * o.lda + i)] : o.a[std::size_t(i * o.lda + p)]; }
float b_at(const Operands& o, long p, long j) { return o.tb ? o.b[std::size_t(j * o.ldb + p)] : o.b[std::size_t(p * o.ldb + j)]; }

std::vector<float> f32_kernel(const Operands& o, float alpha, float beta, void (*between_blocks)() = nullptr) {
  std::vector<float> c = o.c;
  isa::gemm_f32_avx512(o.ta, o.tb, o.m, o.n, o.k, alpha, o.a.data(), o.lda, o.b.data(), o.ldb, beta, c.data(), o.ldc,
                       between_blocks);
  return c;
}

void expect_product(const Operands& o, float alpha, float beta, const std::vector<float>& got) {
  double worst = 0;
  for (long i = 0; i < o.m; ++i)
    for (long j = 0; j < o.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (long p = 0; p < o.k; ++p) {
        const double xy = double(a_at(o, i, p)) * b_at(o, p, j);
        sum += xy;
        abs_sum += std::abs(xy);
      }
      const double c_in = o.c[std::size_t(i * o.ldc + j)];
      const double want = alpha * sum + (beta == 0.0f ? 0.0 : beta * c_in);
      const double scale = std::abs(alpha) * abs_sum + std::abs(beta * c_in) + 1e-30;
      worst = std::max(worst, std::abs(got[std::size_t(i * o.ldc + j)] - want) / scale);
    }
  // fp32 accumulation of k products: a few ulp of 2^-24 times k at worst.
  EXPECT_LE(worst, (4.0 * double(o.k) + 2.0) * 6e-8) << "not the product";
  for (long i = 0; i < o.m; ++i)  // the padding of C is untouched
    for (long j = o.n; j < o.ldc; ++j) EXPECT_EQ(got[std::size_t(i * o.ldc + j)], o.c[std::size_t(i * o.ldc + j)]);
}

// The product through gemm() under an installed poller (which does nothing): our kernel on AVX-512 CPUs
// (GemmUnderAPollerPollsAndComputesTheProduct checks its bits), row panels elsewhere.
std::vector<float> polled_gemm(const Operands& o, float alpha, float beta) {
  std::vector<float> c = o.c;
  const ProgressScope polling([] {}, 1000);
  gemm<float>(o.ta ? Trans::Yes : Trans::No, o.tb ? Trans::Yes : Trans::No, o.m, o.n, o.k, alpha, o.a.data(), o.lda,
              o.b.data(), o.ldb, beta, c.data(), o.ldc);
  return c;
}

long g_calls = 0;
void count_call() { ++g_calls; }

bool avx512() { return cpu_runs(CpuIsa::Avx512); }

TEST(GemmPolled, PolledProductIsTheProductForEveryTranspositionAndShape) {
  // Shapes below and across the tile (6 x 64) and block (192 rows, 256 k, 512 columns) edges.
  const long shapes[][3] = {{1, 1, 1}, {7, 65, 17}, {6, 64, 8}, {203, 150, 300}, {193, 513, 257}, {400, 70, 9}};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& s : shapes) {
        SCOPED_TRACE(testing::Message() << "ta " << ta << " tb " << tb << " m " << s[0] << " n " << s[1] << " k " << s[2]);
        const Operands o = operands(ta, tb, s[0], s[1], s[2], unsigned(s[0] + s[1] + s[2]));
        expect_product(o, 1.0f, 0.0f, polled_gemm(o, 1.0f, 0.0f));
        expect_product(o, 0.5f, -1.5f, polled_gemm(o, 0.5f, -1.5f));
      }
}

TEST(GemmPolled, PolledProductWithNothingToAddScalesC) {
  const Operands o = operands(false, false, 5, 7, 0, 3);
  const std::vector<float> c = polled_gemm(o, 1.0f, 0.5f);
  for (long i = 0; i < o.m; ++i)
    for (long j = 0; j < o.n; ++j) EXPECT_EQ(c[std::size_t(i * o.ldc + j)], 0.5f * o.c[std::size_t(i * o.ldc + j)]);
}

// The poller runs once per block of rows (192) of every block of k (256) and columns (512), and where it is
// called changes nothing: its bits are those of a product without it, and of the same product cut into row
// panels (the summation order depends on k only), in both kernels.
TEST(GemmPolled, KernelsCallThePollerAfterEachBlockWithoutChangingABit) {
  if (!avx512()) GTEST_SKIP() << "this CPU has no AVX-512: gemm() never calls the kernels here";
  const long m = 400, n = 600, k = 300;  // 3 row blocks x 2 column blocks x 2 k blocks
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(testing::Message() << "ta " << ta << " tb " << tb);
      const Operands o = operands(ta, tb, m, n, k, 5);
      g_calls = 0;
      const std::vector<float> polled = f32_kernel(o, 0.5f, 1.0f, count_call);
      EXPECT_EQ(g_calls, 3 * 2 * 2);
      const std::vector<float> plain = f32_kernel(o, 0.5f, 1.0f);
      EXPECT_EQ(0, std::memcmp(polled.data(), plain.data(), plain.size() * sizeof(float)));
      std::vector<float> panels = o.c;
      for (long i0 = 0; i0 < m; i0 += 37) {
        const float* a_panel = ta ? o.a.data() + i0 : o.a.data() + i0 * o.lda;
        isa::gemm_f32_avx512(ta, tb, std::min(37L, m - i0), n, k, 0.5f, a_panel, o.lda, o.b.data(), o.ldb, 1.0f,
                             panels.data() + i0 * o.ldc, o.ldc);
      }
      EXPECT_EQ(0, std::memcmp(panels.data(), plain.data(), plain.size() * sizeof(float)));
      if (!bf16_supported()) continue;
      std::vector<float> bf16_polled = o.c, bf16_plain = o.c;
      g_calls = 0;
      isa::gemm_bf16_avx512(ta, tb, m, n, k, 0.5f, o.a.data(), o.lda, o.b.data(), o.ldb, 1.0f, bf16_polled.data(),
                            o.ldc, nullptr, count_call);
      EXPECT_EQ(g_calls, 3 * 1 * 2);  // the bf16 kernel's column blocks are 1024 wide
      isa::gemm_bf16_avx512(ta, tb, m, n, k, 0.5f, o.a.data(), o.lda, o.b.data(), o.ldb, 1.0f, bf16_plain.data(),
                            o.ldc);
      EXPECT_EQ(0, std::memcmp(bf16_polled.data(), bf16_plain.data(), bf16_plain.size() * sizeof(float)));
    }
}

// With a poller installed, gemm() polls during the product and computes it: on AVX-512 CPUs in the kernel
// (its bits), elsewhere in row panels; without one, in one BLAS call that does not poll.
TEST(GemmPolled, GemmUnderAPollerPollsAndComputesTheProduct) {
  const Operands o = operands(false, true, 500, 700, 600, 9);  // 3 x 2 x 3 blocks of at least 6 x 64 x 88
  long polls = 0;
  std::vector<float> c = o.c;
  {
    const ProgressScope polling([&polls] { ++polls; }, 1);  // 1 us: less than any block or panel takes
    gemm<float>(Trans::No, Trans::Yes, o.m, o.n, o.k, 1.0f, o.a.data(), o.lda, o.b.data(), o.ldb, 0.0f, c.data(), o.ldc);
  }
  EXPECT_GE(polls, 2);
  expect_product(o, 1.0f, 0.0f, c);
  if (avx512()) {
    const std::vector<float> kernel = f32_kernel(o, 1.0f, 0.0f);
    EXPECT_EQ(0, std::memcmp(c.data(), kernel.data(), c.size() * sizeof(float)));
  }
  polls = 0;
  std::vector<float> blas = o.c;
  gemm<float>(Trans::No, Trans::Yes, o.m, o.n, o.k, 1.0f, o.a.data(), o.lda, o.b.data(), o.ldb, 0.0f, blas.data(), o.ldc);
  EXPECT_EQ(polls, 0);
  expect_product(o, 1.0f, 0.0f, blas);
}

}  // namespace
}  // namespace llmtrain::model
