// Host gemm dispatch: row-major CBLAS. In a CUDA build of Kokkos, gemm() goes to cuBLAS instead
// (src/model/cuda/gemm_cublas.cpp), since the pointers then live in device memory.
#include <cblas.h>

#include <Kokkos_Core.hpp>
#include <algorithm>

#include "llmtrain/core/progress.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

#if defined(KOKKOS_ENABLE_CUDA)
template <typename T>
void gemm_cublas(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, const T*,
                 std::int64_t, T, T*, std::int64_t);
#endif

namespace {

GemmStats g_stats;

CBLAS_TRANSPOSE to_cblas(Trans t) { return t == Trans::Yes ? CblasTrans : CblasNoTrans; }

void host_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
              beta, c, int(ldc));
}
void host_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
               std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
              beta, c, int(ldc));
}

// Splits a product into panels of rows of C when a progress poller is installed, so that communication
// in flight is polled about every parallel.progress_us even inside one large gemm. The panel height comes
// from the configured interval and a nominal 100 GFLOP/s per core, never from a measured time: the same
// configuration always cuts the same panels.
constexpr double kNominalFlopsPerSecond = 1e11;
constexpr std::int64_t kPanelRowMultiple = 64;

template <typename T>
void host_gemm_polled(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                      std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const double budget = double(progress_interval_us()) * 1e-6 * kNominalFlopsPerSecond;
  std::int64_t rows = m;
  if (budget > 0 && k > 0) {
    rows = std::int64_t(budget / (2.0 * double(n) * double(k))) / kPanelRowMultiple * kPanelRowMultiple;
    rows = std::max(rows, kPanelRowMultiple);
  }
  for (std::int64_t i0 = 0; i0 < m; i0 += rows) {
    const std::int64_t panel = std::min(rows, m - i0);
    const T* a_panel = ta == Trans::No ? a + i0 * lda : a + i0;  // op(A) rows i0.. : A's rows or columns
    host_gemm(ta, tb, panel, n, k, alpha, a_panel, lda, b, ldb, beta, c + i0 * ldc, ldc);
    poll_progress();
  }
}

}  // namespace

template <typename T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  const Stopwatch watch;
#if defined(KOKKOS_ENABLE_CUDA)
  Kokkos::fence();  // Kokkos kernels and cuBLAS may use different streams
  gemm_cublas<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  Kokkos::fence();
#else
  host_gemm_polled(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
  g_stats.seconds += watch.seconds();
  g_stats.flops += 2.0 * double(m) * double(n) * double(k);
  g_stats.calls += 1;
}

template void gemm<float>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);
template void gemm<double>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, double, double*, std::int64_t);

GemmStats gemm_stats() { return g_stats; }
void reset_gemm_stats(const GemmStats& value) { g_stats = value; }

}  // namespace llmtrain::model
