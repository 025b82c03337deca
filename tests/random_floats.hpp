// Normally distributed test inputs from an explicit seed, shared by the tests of the per-ISA kernels
// (model and optimizer): the same seed gives the same values on every machine.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace llmtrain::testing {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

}  // namespace llmtrain::testing
