// Greedy and nucleus sampling of the next token (see sampling.hpp).
#include "llmtrain/model/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "philox.hpp"

namespace llmtrain::model {

void validate(const SamplingOptions& o) {
  LLMTRAIN_CHECK(std::isfinite(o.temperature) && o.temperature >= 0, "--temperature must be >= 0, got ", o.temperature);
  LLMTRAIN_CHECK(o.top_p > 0 && o.top_p <= 1, "--top-p must lie in (0, 1], got ", o.top_p);
}

namespace {
// A uniform double in [0, 1) from 53 bits of the Philox block at (stream, position).
double uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t position) {
  const PhiloxCounter block = philox4x32_10(
      {std::uint32_t(stream), std::uint32_t(stream >> 32), std::uint32_t(position), std::uint32_t(position >> 32)},
      {std::uint32_t(seed), std::uint32_t(seed >> 32)});
  const std::uint64_t bits = (std::uint64_t(block[0]) << 32 | block[1]) >> 11;
  return double(bits) * 0x1.0p-53;
}
}  // namespace

TokenId next_token(const float* logits, std::int64_t vocab, const SamplingOptions& o, std::uint64_t stream,
                   std::uint64_t position) {
  const float* best = std::max_element(logits, logits + vocab);  // the first of equal maxima
  if (o.temperature == 0) return TokenId(best - logits);
  // Probabilities in double, most likely first (ties by id, so the order is fixed), cut at top_p.
  std::vector<double> p(std::size_t(vocab), 0.0);
  double sum = 0;
  for (std::int64_t i = 0; i < vocab; ++i)
    sum += p[std::size_t(i)] = std::exp((double(logits[i]) - double(*best)) / o.temperature);
  std::vector<TokenId> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](TokenId a, TokenId b) { return p[std::size_t(a)] > p[std::size_t(b)]; });
  std::size_t kept = 0;
  double mass = 0;
  while (kept < order.size() && (kept == 0 || mass < o.top_p * sum)) mass += p[std::size_t(order[kept++])];
  const double u = uniform(o.seed, stream, position) * mass;
  double running = 0;
  for (std::size_t i = 0; i < kept; ++i) {
    running += p[std::size_t(order[i])];
    if (u < running) return order[i];
  }
  return order[kept - 1];  // u within rounding of the kept mass
}

}  // namespace llmtrain::model
