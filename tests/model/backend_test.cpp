// The backend seam on the host (backend.hpp, buffer.hpp): a backend counts the bytes its buffers hold and
// their peak, a Buffer frees once however it was moved, new buffers are zero and copies round-trip, the
// factory refuses what this build cannot run, and a model on a backend handed to it allocates there exactly
// its own bytes (Model::own_bytes, less the attention tiles, which the tiled attention keeps as Views of its
// own) and gives them back when it goes, with the bits of a model on a backend of its own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attention.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "small_model.hpp"

namespace llmtrain::model {
namespace {

TEST(HostBackend, CountsAllocatedAndPeakBytes) {
  auto backend = make_backend<float>(Device::Cpu);
  EXPECT_EQ(backend->device(), Device::Cpu);
  {
    Buffer<float> a(*backend, 100, "a");
    Buffer<std::int32_t> b(*backend, 50, "b");
    EXPECT_EQ(backend->allocated_bytes(), 600);
    Buffer<float> moved = std::move(a);
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(backend->allocated_bytes(), 600);
    b = Buffer<std::int32_t>();
    EXPECT_EQ(backend->allocated_bytes(), 400);
    EXPECT_EQ(backend->peak_bytes(), 600);
  }
  EXPECT_EQ(backend->allocated_bytes(), 0);
  EXPECT_EQ(backend->peak_bytes(), 600);
}

TEST(HostBackend, BuffersStartZeroAndCopiesRoundTrip) {
  auto backend = make_backend<double>(Device::Cpu);
  Buffer<double> buffer(*backend, 3, "buffer");
  EXPECT_EQ(buffer.to_host(), std::vector<double>(3, 0.0));
  buffer.copy_from_host({1.5, -2.0, 3.25});
  EXPECT_EQ(buffer.to_host(), (std::vector<double>{1.5, -2.0, 3.25}));
  EXPECT_THROW(buffer.copy_from_host({1.0}), Error);
}

void expect_refused(Device device, bool is_float, const std::string& reason) {
  try {
    if (is_float)
      make_backend<float>(device);
    else
      make_backend<double>(device);
    ADD_FAILURE() << "a " << device_name(device) << " backend was made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(BackendFactory, RefusesWhatThisBuildCannotRun) {
  expect_refused(Device::Cuda, false, "float only");
#if !defined(LLMTRAIN_WITH_CUDA)
  expect_refused(Device::Cuda, true, "LLMTRAIN_ENABLE_CUDA=ON");
#endif
}

TEST(HostBackend, ModelAllocatesItsOwnBytesThereAndReturnsThem) {
  for (const auto recompute : {Recompute::None, Recompute::Blocks}) {
    const ModelConfig c = small_config(false);
    const Batch batch = small_batch();
    auto backend = make_backend<float>(Device::Cpu);
    LocalUnits<float> shared_units(c), own_units(c);
    LossSum shared_loss;
    {
      Model<float> model(c, recompute, shared_units, *backend);
      shared_loss = model.forward_backward(batch, 1.0);
      const std::int64_t tiles = Attention<float>::elements(attention_shape(c, batch.rows, batch.seq_len)) * 4;
      EXPECT_EQ(backend->peak_bytes(), Model<float>::own_bytes(c, recompute, batch.rows, batch.seq_len) - tiles);
    }
    EXPECT_EQ(backend->allocated_bytes(), 0);
    Model<float> own(c, recompute, own_units);
    EXPECT_EQ(own.forward_backward(batch, 1.0).sum, shared_loss.sum);
    for (std::size_t u = 0; u < own_units.grads().size(); ++u)
      for (std::size_t i = 0; i < own_units.grads()[u].flat.size(); ++i)
        ASSERT_EQ(shared_units.grads()[u].flat(i), own_units.grads()[u].flat(i)) << "unit " << u << " element " << i;
  }
}

}  // namespace
}  // namespace llmtrain::model
