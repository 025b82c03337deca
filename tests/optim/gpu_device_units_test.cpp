// AdamW and the gradient's sum of squares over units in a CUDA backend's memory (the replicated store's units
// on a device: model::LocalUnits over the backend) against the same units on the host: the parameters arrive
// with the host's bits; after three steps from the same gradients every parameter and moment is within 1e-5 of
// its unit's largest host value; the sum of squares within 1e-12 relative; a device step repeats bitwise.
// Needs a CUDA device: exits 77 (skipped) without.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "../model/small_model.hpp"
#include "../random_floats.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/optim/grad_clip.hpp"

namespace llmtrain::optim {
namespace {

using model::ParamUnit;
using Units = std::vector<ParamUnit<float>>;

// The units' contents on the host (copies of device units).
std::vector<std::vector<float>> host_values(model::Memory& memory, const Units& units) {
  std::vector<std::vector<float>> out;
  for (const auto& unit : units) {
    out.emplace_back(unit.flat.size());
    memory.copy_to_host(out.back().data(), unit.flat.data(), std::int64_t(4 * unit.flat.size()));
  }
  return out;
}

void expect_close(const char* what, const std::vector<std::vector<float>>& device, const Units& host) {
  for (std::size_t u = 0; u < host.size(); ++u) {
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < host[u].flat.size(); ++i) {
      worst = std::max(worst, std::abs(double(device[u][i]) - double(host[u].flat(i))));
      largest = std::max(largest, std::abs(double(host[u].flat(i))));
    }
    EXPECT_LE(worst, 1e-5 * largest) << what << " of " << host[u].layout.name;
  }
}

// Three steps on `units` (params and grads where they live) from the gradients `grads`, whose unit u is
// written into the units' gradient before each step.
void three_steps(model::LocalUnits<float>& units, AdamW& adamw, const std::vector<std::vector<float>>& grads,
                 model::Backend<float>* device) {
  for (std::size_t u = 0; u < grads.size(); ++u) {
    float* g = units.grads()[u].flat.data();
    if (device)
      device->copy_from_host(g, grads[u].data(), std::int64_t(4 * grads[u].size()));
    else
      std::copy(grads[u].begin(), grads[u].end(), g);
  }
  for (int step = 0; step < 3; ++step) {
    const double norm = std::sqrt(sum_of_squares(units.grads(), device));
    adamw.step(units.params(), units.grads(), 1e-3 * (step + 1), clip_factor(norm, 1.0));
  }
}

TEST(DeviceUnits, AdamWAndTheNormMatchTheHost) {
  const ModelConfig config = model::small_config(false);
  auto backend = model::make_backend<float>(model::Device::Cuda);
  model::LocalUnits<float> host(config), device(config, backend.get());
  // The parameters arrive with the host's bits.
  const auto arrived = host_values(*backend, device.params());
  for (std::size_t u = 0; u < arrived.size(); ++u)
    EXPECT_TRUE(std::equal(arrived[u].begin(), arrived[u].end(), host.params()[u].flat.data())) << u;

  std::vector<std::vector<float>> grads;
  for (std::size_t u = 0; u < host.grads().size(); ++u)
    grads.push_back(testing::random_floats(host.grads()[u].flat.size(), std::uint32_t(7 + u), 1.0f));

  AdamWOptions options;
  AdamW on_host(host.params(), options), on_device(device.params(), options, backend.get());
  EXPECT_EQ(on_device.device(), backend.get());
  three_steps(host, on_host, grads, nullptr);
  three_steps(device, on_device, grads, backend.get());
  const double host_sum = sum_of_squares(host.grads(), nullptr), device_sum = sum_of_squares(device.grads(), backend.get());
  EXPECT_LE(std::abs(device_sum - host_sum), 1e-12 * host_sum);
  expect_close("parameter", host_values(*backend, device.params()), host.params());
  expect_close("first moment", host_values(*backend, on_device.first_moments()), on_host.first_moments());
  expect_close("second moment", host_values(*backend, on_device.second_moments()), on_host.second_moments());

  // The same device steps again from the same start repeat bitwise.
  model::LocalUnits<float> again(config, backend.get());
  AdamW on_device_again(again.params(), options, backend.get());
  three_steps(again, on_device_again, grads, backend.get());
  EXPECT_EQ(host_values(*backend, again.params()), host_values(*backend, device.params()));
}

}  // namespace
}  // namespace llmtrain::optim
