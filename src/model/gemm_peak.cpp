// Measured gemm peak (fp32 or bf16): the reference for MFU, taken in the same process and run as the training.
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

double measure_gemm_peak(Precision precision, std::int64_t n, int repeats) {
  Kokkos::View<float*> a("peak.a", n * n), b("peak.b", n * n), c("peak.c", n * n);
  Kokkos::deep_copy(a, 0.5f);
  Kokkos::deep_copy(b, 0.25f);
  const GemmStats before = gemm_stats();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const Stopwatch watch;
    gemm<float>(Trans::No, Trans::No, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n, precision);
    Kokkos::fence();
    best = std::min(best, watch.seconds());
  }
  // Leave the counters as they were: the peak probe is not part of the measured work.
  reset_gemm_stats(before);
  return 2.0 * double(n) * double(n) * double(n) / best;
}

}  // namespace llmtrain::model
