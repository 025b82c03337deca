// Measured gemm peak (fp32 or bf16): the reference for MFU, taken in the same process and run as the training.
//
// One timed call is noisy on a shared machine (another process takes the core for a few milliseconds) and
// the first calls pay for page faults and BLAS start-up, so the probe warms up, then times many calls over
// a fixed minimum duration and takes a high percentile of their rates: slow calls (interference) and a
// single implausibly fast one (timer granularity) both fall outside it. The trainer still never reports
// MFU against a peak below what a step achieved (train/trainer.cpp).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

double peak_from_rates(std::vector<double> rates, double percentile) {
  LLMTRAIN_CHECK(!rates.empty(), "no sgemm rates to take a peak from");
  LLMTRAIN_CHECK(percentile > 0 && percentile <= 100, "percentile must be in (0, 100], got ", percentile);
  std::sort(rates.begin(), rates.end());
  // Nearest rank: the smallest rate that at least `percentile` % of the samples do not exceed.
  const auto rank = static_cast<std::size_t>(std::ceil(percentile / 100.0 * double(rates.size())));
  return rates[std::max<std::size_t>(rank, 1) - 1];
}

double measure_gemm_peak(Precision precision, std::int64_t n, double min_seconds) {
  constexpr int kWarmUp = 2, kMinCalls = 10;
  constexpr double kPercentile = 90;
  Kokkos::View<float*> a("peak.a", n * n), b("peak.b", n * n), c("peak.c", n * n);
  Kokkos::deep_copy(a, 0.5f);
  Kokkos::deep_copy(b, 0.25f);
  const GemmStats before = gemm_stats();
  const double flops = 2.0 * double(n) * double(n) * double(n);
  std::vector<double> rates;
  const Stopwatch total;
  for (int call = 0; call < kWarmUp + kMinCalls || total.seconds() < min_seconds; ++call) {
    const Stopwatch watch;
    gemm<float>(Trans::No, Trans::No, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n, precision);
    Kokkos::fence();
    if (call >= kWarmUp) rates.push_back(flops / watch.seconds());
  }
  // Leave the counters as they were: the peak probe is not part of the measured work.
  reset_gemm_stats(before);
  return peak_from_rates(std::move(rates), kPercentile);
}

}  // namespace llmtrain::model
