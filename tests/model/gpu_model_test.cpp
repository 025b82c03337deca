// The decoder on the CUDA backend against the host backend: the same parameters (LocalUnits over the backend:
// the host's, copied into cudaMalloc'd units), the same batches, one forward_backward each. fp32: the loss
// within 1e-4 relative and every gradient tensor within 1e-4 of its largest host value; bf16 products: the
// loss within 2e-2 relative.
// A device run repeats bitwise, and recompute = blocks gives the bits of recompute = none. The small model
// of the other model tests (grouped-query attention, document masks, an ignored target) and a longer batch
// whose 320 positions take the head's two chunks and several attention tiles. Decoding refuses the device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/decoder.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "small_model.hpp"

namespace llmtrain::model {
namespace {

// The gradients of units in a backend's memory, on the host, per unit.
std::vector<std::vector<float>> grads_on_host(Memory& memory, LocalUnits<float>& units) {
  std::vector<std::vector<float>> out;
  for (const auto& g : units.grads()) {
    out.emplace_back(g.flat.size());
    memory.copy_to_host(out.back().data(), g.flat.data(), std::int64_t(sizeof(float) * g.flat.size()));
  }
  return out;
}

struct Pass {
  LossSum loss;
  std::vector<std::vector<float>> grads;  // per unit
};

Pass on_device(const ModelConfig& config, const Batch& batch, Recompute recompute, Precision precision) {
  auto backend = make_backend<float>(Device::Cuda);
  LocalUnits<float> units(config, backend.get());  // the host's parameters, copied over
  Model<float> model(config, recompute, units, *backend, precision);
  Pass pass{model.forward_backward(batch, 1.0), {}};
  pass.grads = grads_on_host(*backend, units);
  return pass;
}

Pass on_host(const ModelConfig& config, const Batch& batch, Precision precision) {
  LocalUnits<float> units(config);
  Model<float> model(config, Recompute::None, units, precision);
  Pass pass{model.forward_backward(batch, 1.0), {}};
  for (const auto& g : units.grads()) pass.grads.emplace_back(g.flat.data(), g.flat.data() + g.flat.size());
  return pass;
}

// 2 rows of 160 positions (320: two chunks of the head), random tokens in three documents per row, one
// ignored target.
ModelConfig long_config() {
  ModelConfig c = small_config(false);
  c.vocab_size = 300;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 48;
  c.max_seq_len = 160;
  c.init_std = 0.1;
  return c;
}

Batch long_batch(const ModelConfig& c) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<TokenId> token(0, TokenId(c.vocab_size - 1));
  Batch b;
  b.rows = 2;
  b.seq_len = 160;
  for (std::int64_t i = 0; i < b.rows * b.row_width(); ++i) {
    b.tokens.push_back(token(rng));
    b.doc_index.push_back(std::int32_t(i % b.row_width() / 60));
  }
  b.tokens[std::size_t(b.seq_len)] = c.ignore_index;  // row 0's last target
  return b;
}

void expect_close(const ModelConfig& config, const Pass& device, const Pass& host) {
  EXPECT_EQ(device.loss.count, host.loss.count);
  EXPECT_NEAR(device.loss.sum, host.loss.sum, 1e-4 * std::abs(host.loss.sum));
  const auto layouts = unit_layouts(config);
  for (std::size_t u = 0; u < layouts.size(); ++u)
    for (const auto& tensor : layouts[u].tensors) {
      double diff = 0, largest = 0;
      for (std::int64_t i = tensor.offset; i < tensor.offset + tensor.size(); ++i) {
        diff = std::max(diff, double(std::abs(device.grads[u][std::size_t(i)] - host.grads[u][std::size_t(i)])));
        largest = std::max(largest, double(std::abs(host.grads[u][std::size_t(i)])));
      }
      EXPECT_GT(largest, 0.0) << layouts[u].name << "." << tensor.name << " has no gradient to compare";
      EXPECT_LE(diff, 1e-4 * largest) << layouts[u].name << "." << tensor.name;
    }
}

TEST(GpuModel, Fp32MatchesTheHost) {
  for (const bool tied : {false, true}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    const ModelConfig c = small_config(tied);
    expect_close(c, on_device(c, small_batch(), Recompute::None, Precision::Fp32),
                 on_host(c, small_batch(), Precision::Fp32));
  }
  const ModelConfig c = long_config();
  expect_close(c, on_device(c, long_batch(c), Recompute::None, Precision::Fp32),
               on_host(c, long_batch(c), Precision::Fp32));
}

TEST(GpuModel, Bf16LossMatchesTheHost) {
  int device = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  if (major < 8) GTEST_SKIP() << "bf16 products need compute capability 8.0";
  const ModelConfig c = long_config();
  const double device_loss = on_device(c, long_batch(c), Recompute::None, Precision::Bf16).loss.sum;
  const double host_loss = on_host(c, long_batch(c), Precision::Bf16).loss.sum;
  EXPECT_NEAR(device_loss, host_loss, 2e-2 * std::abs(host_loss));
}

void expect_bitwise(const Pass& a, const Pass& b) {
  EXPECT_EQ(a.loss.sum, b.loss.sum);
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (std::size_t u = 0; u < a.grads.size(); ++u) EXPECT_EQ(a.grads[u], b.grads[u]) << "unit " << u;
}

TEST(GpuModel, RepeatsBitwise) {
  const ModelConfig c = long_config();
  expect_bitwise(on_device(c, long_batch(c), Recompute::None, Precision::Fp32),
                 on_device(c, long_batch(c), Recompute::None, Precision::Fp32));
}

TEST(GpuModel, RecomputeBlocksGivesTheBitsOfNone) {
  const ModelConfig c = long_config();
  expect_bitwise(on_device(c, long_batch(c), Recompute::Blocks, Precision::Fp32),
                 on_device(c, long_batch(c), Recompute::None, Precision::Fp32));
}

TEST(GpuModel, DecodeRefusesTheDevice) {
  const ModelConfig c = small_config(false);
  auto backend = make_backend<float>(Device::Cuda);
  LocalUnits<float> units(c, backend.get());
  Model<float> model(c, Recompute::None, units, *backend);
  KvCache<float> cache(c, 1, 4);
  Batch prompt;
  prompt.rows = 1;
  prompt.seq_len = 2;
  prompt.tokens = {1, 2, 3};
  try {
    model.decode(prompt, cache, {1});
    ADD_FAILURE() << "decode ran on the cuda backend";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host backend only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmtrain::model
