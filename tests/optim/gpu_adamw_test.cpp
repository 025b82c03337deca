// The optimizer's device passes (src/optim/cuda/optim_kernels.hpp) against the host: AdamW's multi-tensor
// update against the host's per-ISA update with the same coefficients, over several steps, ranges of odd sizes
// (one element, around a chunk, empty), decayed and not; the squared gradient norm against a double sum on
// the host. fp32 tensors: max |device - host| <= 1e-5 max |host| per tensor. Each device pass runs twice from
// the same inputs and must repeat bitwise. Needs a CUDA device: exits 77 (skipped) without.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../device_buffer.hpp"
#include "../random_floats.hpp"
#include "cuda/compute_stream.hpp"
#include "cuda/optim_kernels.hpp"
#include "isa/adamw_kernels.hpp"

namespace llmtrain::optim {
namespace {

using Floats = std::vector<float>;
using isa::AdamWCoefficients;
using testing::DeviceBuffer;
using testing::random_floats;

// Sizes around the kernels' chunk of 4096 elements and their block of 256 threads, and an empty range.
const std::int64_t kSizes[] = {1, 4095, 0, 4097, 10007, 300};

cudaStream_t stream() { return model::cuda::compute_stream(); }

// AdamW::step's coefficients for step t (1-based) with weight decay 0.1 (keep applies to decayed tensors).
AdamWCoefficients coefficients(int t, double lr, double grad_scale) {
  const double b1 = 0.9, b2 = 0.95;
  AdamWCoefficients c{};
  c.step_size = float(lr / (1.0 - std::pow(b1, double(t))));
  c.bias2_sqrt = float(std::sqrt(1.0 - std::pow(b2, double(t))));
  c.beta1 = float(b1);
  c.beta2 = float(b2);
  c.eps = 1e-8f;
  c.clip = float(grad_scale);
  c.keep = float(1.0 - lr * 0.1);
  return c;
}

void expect_close(const std::string& what, const Floats& device, const Floats& host) {
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    worst = std::max(worst, std::abs(double(device[i]) - double(host[i])));
    largest = std::max(largest, std::abs(double(host[i])));
  }
  EXPECT_LE(worst, 1e-5 * largest) << what << ": max |device - host| " << worst << ", max |host| " << largest;
}

// One tensor's parameter, gradient and moments.
struct Tensor {
  Floats p, g, m, v;
  bool decay;
};

std::vector<Tensor> make_tensors() {
  std::vector<Tensor> tensors;
  std::uint32_t seed = 1;
  for (const std::int64_t n : kSizes) {
    const auto size = std::size_t(n);
    tensors.push_back({random_floats(size, seed, 1.0f), random_floats(size, seed + 1, 0.1f), Floats(size, 0.0f),
                       Floats(size, 0.0f), seed % 4 != 1});
    seed += 2;
  }
  return tensors;
}

// The tensors on the device (one buffer per member; an empty tensor gets a one-element buffer it never reads).
struct DeviceTensors {
  std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
  std::vector<cuda::AdamWRange> ranges;
  explicit DeviceTensors(const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors) {
      float* pointers[4];
      const Floats* members[4] = {&t.p, &t.g, &t.m, &t.v};
      for (int k = 0; k < 4; ++k) {
        buffers.push_back(std::make_unique<DeviceBuffer<float>>(members[k]->empty() ? Floats(1) : *members[k]));
        pointers[k] = buffers.back()->get();
      }
      ranges.push_back({pointers[0], pointers[1], pointers[2], pointers[3], std::int64_t(t.p.size()), t.decay});
    }
  }
  // Parameter and moments of tensor i, as on the host.
  void read(std::size_t i, Tensor& out) const {
    if (out.p.empty()) return;
    out.p = buffers[4 * i]->read();
    out.m = buffers[4 * i + 2]->read();
    out.v = buffers[4 * i + 3]->read();
  }
};

TEST(GpuAdamW, MultiTensorUpdateMatchesHost) {
  const std::vector<Tensor> start = make_tensors();
  std::vector<Tensor> host = start;
  std::vector<std::vector<Tensor>> device_runs;
  for (int run = 0; run < 2; ++run) {
    DeviceTensors device(start);
    for (int t = 1; t <= 3; ++t) cuda::adamw_update(device.ranges, coefficients(t, 1e-3, 0.7), stream());
    device_runs.push_back(start);
    for (std::size_t i = 0; i < start.size(); ++i) device.read(i, device_runs.back()[i]);
  }
  for (int t = 1; t <= 3; ++t)
    for (Tensor& x : host) {
      AdamWCoefficients c = coefficients(t, 1e-3, 0.7);
      if (!x.decay) c.keep = float(1.0 - 1e-3 * 0.0);
      isa::adamw_kernel().update(x.p.data(), x.g.data(), x.m.data(), x.v.data(), std::int64_t(x.p.size()), c);
    }
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i].p.empty()) continue;
    const std::string what = "tensor " + std::to_string(i) + " (" + std::to_string(host[i].p.size()) + " elements)";
    expect_close(what + " parameter", device_runs[0][i].p, host[i].p);
    expect_close(what + " first moment", device_runs[0][i].m, host[i].m);
    expect_close(what + " second moment", device_runs[0][i].v, host[i].v);
    EXPECT_NE(std::memcmp(device_runs[0][i].p.data(), start[i].p.data(), start[i].p.size() * sizeof(float)), 0)
        << what << ": the parameter did not change";
    for (const auto& [a, b] : {std::pair{&device_runs[0][i].p, &device_runs[1][i].p},
                               std::pair{&device_runs[0][i].m, &device_runs[1][i].m},
                               std::pair{&device_runs[0][i].v, &device_runs[1][i].v}})
      EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size() * sizeof(float)), 0) << what << ": not repeated bitwise";
  }
}

TEST(GpuAdamW, SquaredNormOfAllRanges) {
  const std::vector<Tensor> tensors = make_tensors();
  double host = 0;
  for (const Tensor& t : tensors)
    for (const float x : t.g) host += double(x) * double(x);
  DeviceTensors device(tensors);
  std::vector<cuda::TensorRange> ranges;
  for (const cuda::AdamWRange& r : device.ranges) ranges.push_back({r.grad, r.size});
  double runs[2];
  for (double& out : runs) {
    DeviceBuffer<double> d_out(std::vector<double>{-1.0});
    cuda::squared_norm(d_out.get(), ranges, stream());
    out = d_out.read()[0];
  }
  EXPECT_NEAR(runs[0], host, 1e-12 * host);
  EXPECT_EQ(std::memcmp(&runs[0], &runs[1], sizeof(double)), 0) << "squared_norm does not repeat bitwise";
  DeviceBuffer<double> d_empty(std::vector<double>{-1.0});
  cuda::squared_norm(d_empty.get(), {}, stream());
  EXPECT_EQ(d_empty.read()[0], 0.0) << "no ranges: the sum of no squares is 0";
}

}  // namespace
}  // namespace llmtrain::optim
