// Host gemm dispatch: row-major CBLAS on host memory. Device products are cuda::gemm
// (src/model/cuda/gemm_cublas.cpp), called by the device backend itself: nothing here routes to a GPU.
//
// With a progress poller installed (FSDP: parallel.progress_us), float products run in our AVX-512 kernels
// (isa/gemm_f32_avx512.cpp, isa/gemm_bf16_avx512.cpp), which poll between blocks of rows and pack each
// block of op(B) once; elsewhere the product is cut into row panels, each a BLAS call of its own.
//
// Bf16 products: on CPUs with AVX512_BF16 our kernel (isa/gemm_bf16_avx512.cpp; Debian's OpenBLAS has no
// cblas_sbgemm), which rounds the operands while packing them (op(B) once for all the calls given
// the same ReusedOperandB under one Promise). Elsewhere the same arithmetic is emulated:
// the operands are rounded to bf16 values held in fp32 and multiplied by sgemm. The product of two bf16
// values is exact in fp32, so that too is an fp32 accumulation of bf16 products, only not faster.
#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "llmtrain/core/bf16.hpp"
#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/gemm.hpp"
#include "isa/gemm_bf16_kernel.hpp"
#include "isa/gemm_f32_kernel.hpp"
#include "reused_operand.hpp"

namespace llmtrain::model {

namespace {

GemmStats g_stats;
std::vector<float> g_rounded_a, g_rounded_b;  // scratch of the emulated bf16 path (one thread per process)

CBLAS_TRANSPOSE to_cblas(Trans t) { return t == Trans::Yes ? CblasTrans : CblasNoTrans; }

// Copies a rows x cols matrix with leading dimension ld into dst (leading dimension cols), rounded to bf16.
const float* rounded_copy(std::vector<float>& dst, const float* src, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld) {
  dst.resize(std::size_t(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) dst[std::size_t(r * cols + j)] = round_to_bf16(src[r * ld + j]);
  return dst.data();
}

// Whether our kernel for `precision` runs on this CPU, polling between its blocks (float only).
bool polls_inside(Precision precision) {
  static const bool f32 = cpu_runs(CpuIsa::Avx512);
  return precision == Precision::Bf16 ? bf16_supported() : f32;
}

// between_blocks: the poller to call inside the product (only where polls_inside(precision)).
void host_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
               Precision precision, ReusedOperandB* reuse_b, void (*between_blocks)() = nullptr) {
  const bool trans_a = ta == Trans::Yes, trans_b = tb == Trans::Yes;
  if (precision == Precision::Bf16) {
    if (bf16_supported())
      isa::gemm_bf16_avx512(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                            reuse_b ? reuse_b->packing(trans_b, ldb, n, k) : nullptr, between_blocks);
    else
      isa::gemm_bf16_emulated(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (between_blocks) return isa::gemm_f32_avx512(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                                  between_blocks);
  if (m == 1) {  // one row (a decoder's step): sgemm would copy all of op(B) into its packed layout first
    // c[0, :] = alpha * op(B)^T x + beta * c, x = op(A)'s row: A's row, or with trans_a its column (stride lda).
    const int x_stride = trans_a ? int(lda) : 1;
    if (trans_b)  // B is [n, k]
      cblas_sgemv(CblasRowMajor, CblasNoTrans, int(n), int(k), alpha, b, int(ldb), a, x_stride, beta, c, 1);
    else  // B is [k, n]
      cblas_sgemv(CblasRowMajor, CblasTrans, int(k), int(n), alpha, b, int(ldb), a, x_stride, beta, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
              beta, c, int(ldc));
}
void host_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
               std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc,
               Precision precision, ReusedOperandB*, void (*)() = nullptr) {
  LLMTRAIN_CHECK(precision == Precision::Fp32, "bf16 products are for float operands only");
  cblas_dgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
              beta, c, int(ldc));
}

// With a progress poller installed, communication in flight is polled about every parallel.progress_us
// even inside one large gemm: our kernels poll between their blocks; a BLAS product is split into panels
// of rows of C. The panel height comes from the configured interval and a nominal 100 GFLOP/s per core,
// never from a measured time: the same configuration always cuts the same panels.
constexpr double kNominalFlopsPerSecond = 1e11;
constexpr std::int64_t kPanelRowMultiple = 64;

template <typename T>
void host_gemm_polled(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                      std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
                      Precision precision, ReusedOperandB* reuse_b) {
  if constexpr (std::is_same_v<T, float>)
    if (progress_interval_us() > 0 && polls_inside(precision))
      return host_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, reuse_b, &poll_progress);
  const double budget = double(progress_interval_us()) * 1e-6 * kNominalFlopsPerSecond;
  std::int64_t rows = m;
  if (budget > 0 && k > 0) {
    rows = std::int64_t(budget / (2.0 * double(n) * double(k))) / kPanelRowMultiple * kPanelRowMultiple;
    rows = std::max(rows, kPanelRowMultiple);
  }
  for (std::int64_t i0 = 0; i0 < m; i0 += rows) {
    const std::int64_t panel = std::min(rows, m - i0);
    const T* a_panel = ta == Trans::No ? a + i0 * lda : a + i0;  // op(A) rows i0.. : A's rows or columns
    host_gemm(ta, tb, panel, n, k, alpha, a_panel, lda, b, ldb, beta, c + i0 * ldc, ldc, precision, reuse_b);
    poll_progress();
  }
}

// Every product, timed into gemm_stats(); reuse_b is null or float only.
template <typename T>
void timed_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, Precision precision,
                ReusedOperandB* reuse_b) {
  if (m == 0 || n == 0) return;
  const Stopwatch watch;
  host_gemm_polled(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, reuse_b);
  g_stats.seconds += watch.seconds();
  g_stats.flops += 2.0 * double(m) * double(n) * double(k);
  g_stats.calls += 1;
}

}  // namespace

void isa::gemm_bf16_emulated(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a,
                             long lda, const float* b, long ldb, float beta, float* c, long ldc) {
  const long a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  a = rounded_copy(g_rounded_a, a, trans_a ? k : m, a_cols, lda);
  b = rounded_copy(g_rounded_b, b, trans_b ? n : k, b_cols, ldb);
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(m), int(n),
              int(k), alpha, a, int(std::max(1L, a_cols)), b, int(std::max(1L, b_cols)), beta, c, int(ldc));
}

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16") return Precision::Bf16;
  LLMTRAIN_FAIL("train.precision must be \"fp32\" or \"bf16\", got \"", name, "\"");
}

std::string bf16_slowdown() { return bf16_slower_reason(bf16_hardware()); }

const char* precision_name(Precision precision) { return precision == Precision::Bf16 ? "bf16" : "fp32"; }

bool bf16_supported() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return supported;
}

template <typename T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, Precision precision) {
  timed_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, nullptr);
}

void gemm_reusing_b(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                    std::int64_t ldc, Precision precision, ReusedOperandB& reuse) {
  LLMTRAIN_CHECK(reuse.promises(b), "gemm_reusing_b: B is not the matrix promised to its ReusedOperandB (or none is)");
  timed_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, &reuse);
}

template void gemm<float>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t, Precision);
template void gemm<double>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, double, double*, std::int64_t, Precision);

GemmStats gemm_stats() { return g_stats; }
void reset_gemm_stats(const GemmStats& value) { g_stats = value; }

}  // namespace llmtrain::model
