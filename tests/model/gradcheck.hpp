// Finite-difference gradient checking in double precision, shared by the op and model checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace llmtrain::testing {

inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// Compares analytic[i] with the central difference of loss() when x[i] moves by +-h, for every i.
inline void expect_gradient(const std::string& what, double* x, std::size_t n, const std::function<double()>& loss,
                            const std::vector<double>& analytic, double h = 1e-5, double tolerance = 1e-6) {
  ASSERT_EQ(analytic.size(), n) << what;
  double worst = 0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * h);
    // Relative error with a floor, so that tiny gradients are judged on an absolute scale of 1e-3.
    const double err = std::abs(numeric - analytic[i]) / std::max(1e-3, std::abs(numeric) + std::abs(analytic[i]));
    if (err > worst) {
      worst = err;
      worst_index = i;
    }
  }
  EXPECT_LT(worst, tolerance) << what << ": worst relative error at element " << worst_index;
}

}  // namespace llmtrain::testing
