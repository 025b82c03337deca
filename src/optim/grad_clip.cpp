// Global gradient norm (double accumulation in a fixed order) and the clipping factor.
#include "llmtrain/optim/grad_clip.hpp"

#include <cmath>

namespace llmtrain::optim {

using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;

double global_norm(const std::vector<model::ParamUnit<float>>& grads) {
  // Each parallel index sums one block with 8 independent accumulators: a single running sum would be a
  // serial chain of dependent additions, several times slower than the memory it reads.
  constexpr std::int64_t kBlock = 4096;
  constexpr int kLanes = 8;
  double total = 0;
  for (const auto& unit : grads) {
    const float* g = unit.flat.data();
    const std::int64_t n = std::int64_t(unit.flat.size());
    double sum = 0;
    Kokkos::parallel_reduce("grad_norm", Range(0, (n + kBlock - 1) / kBlock), KOKKOS_LAMBDA(std::int64_t b, double& acc) {
      const std::int64_t begin = b * kBlock, end = begin + kBlock < n ? begin + kBlock : n;
      double lane[kLanes] = {};
      std::int64_t i = begin;
      for (; i + kLanes <= end; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += double(g[i + l]) * double(g[i + l]);
      for (; i < end; ++i) lane[0] += double(g[i]) * double(g[i]);
      for (int l = 0; l < kLanes; ++l) acc += lane[l];
    }, sum);
    total += sum;
  }
  return std::sqrt(total);
}

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

}  // namespace llmtrain::optim
