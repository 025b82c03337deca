// The model's unit access contract (model/unit_access.hpp), proven with a recording store: the exact order
// of acquire / release / gradient / grad_ready for tied and untied heads and both recompute modes, and that
// the model reads parameters only while acquired and writes a gradient only until grad_ready, and that the
// order it acquires in is training_pass_order, the one the FSDP store's gather window predicts. The store
// hands out copies that it poisons with NaN on release and grad_ready, so a read after release or a write
// after grad_ready changes the loss or the gradients, which must be bitwise those of plain whole units.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "small_model.hpp"

namespace llmtrain::model {
namespace {

// Units in this process behind copies that live only between the hooks, and a log of every hook call.
class RecordingUnits final : public UnitAccess<float> {
 public:
  explicit RecordingUnits(const ModelConfig& c) : units(c), held(units.params().size()), grads(held.size()) {}

  const float* acquire(int u) override {
    log.push_back("acquire " + std::to_string(u));
    EXPECT_TRUE(held[u].empty()) << "unit " << u << " acquired twice";
    const auto& flat = units.params()[u].flat;
    held[u].assign(flat.data(), flat.data() + flat.size());
    return held[u].data();
  }
  void release(int u) override {
    log.push_back("release " + std::to_string(u));
    ASSERT_FALSE(held[u].empty()) << "unit " << u << " released without acquire";
    std::fill(held[u].begin(), held[u].end(), std::numeric_limits<float>::quiet_NaN());
    retired.push_back(std::move(held[u]));  // kept alive: a late read sees NaN, not freed memory
    held[u].clear();
  }
  float* gradient(int u) override {
    log.push_back("gradient " + std::to_string(u));
    EXPECT_TRUE(grads[u].empty()) << "gradient of unit " << u << " handed out twice before grad_ready";
    const auto& flat = units.grads()[u].flat;
    grads[u].assign(flat.data(), flat.data() + flat.size());
    return grads[u].data();
  }
  void grad_ready(int u) override {
    log.push_back("grad_ready " + std::to_string(u));
    ASSERT_FALSE(grads[u].empty()) << "grad_ready of unit " << u << " without gradient";
    auto& flat = units.grads()[u].flat;
    std::copy(grads[u].begin(), grads[u].end(), flat.data());
    std::fill(grads[u].begin(), grads[u].end(), std::numeric_limits<float>::quiet_NaN());
    retired.push_back(std::move(grads[u]));
    grads[u].clear();
  }

  LocalUnits<float> units;
  std::vector<std::vector<float>> held, grads, retired;
  std::vector<std::string> log;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find(',', start);
    out.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 2;
  }
  return out;
}

// Units: 0 embedding, 1 and 2 the blocks, 3 the head (final norm, plus the output matrix when untied).
const char* kForward = "acquire 0, release 0, acquire 1, release 1, acquire 2, release 2";
const char* kUntiedPass =
    "acquire 3, gradient 3, release 3, grad_ready 3, "
    "acquire 2, gradient 2, release 2, grad_ready 2, acquire 1, gradient 1, release 1, grad_ready 1, "
    "gradient 0, grad_ready 0";
// Tied: the head acquires the embedding too and adds the output projection's gradient into the embedding's
// gradient, which therefore stays out from the head until the embedding's own backward at the very end.
const char* kTiedPass =
    "acquire 3, acquire 0, gradient 0, gradient 3, release 0, release 3, grad_ready 3, "
    "acquire 2, gradient 2, release 2, grad_ready 2, acquire 1, gradient 1, release 1, grad_ready 1, "
    "grad_ready 0";

// The acquires of a recorded pass as the store's window sees them: the unit of each, and the position of
// the first one after the head's gradient is ready (the first backward block's).
AcquireOrder acquires_of(const std::vector<std::string>& log, int head) {
  AcquireOrder seen;
  for (const std::string& call : log) {
    if (call.rfind("acquire ", 0) == 0) seen.units.push_back(std::stoi(call.substr(8)));
    if (call == "grad_ready " + std::to_string(head)) seen.first_backward = seen.units.size();
  }
  return seen;
}

void check(bool tied, Recompute recompute) {
  const ModelConfig c = small_config(tied);
  RecordingUnits recording(c);
  LocalUnits<float> plain(c);
  Model<float> watched(c, recompute, recording), reference(c, recompute, plain);
  // Two micro-batches: the second accumulates into the gradients the first left.
  for (int micro = 0; micro < 2; ++micro) {
    recording.log.clear();
    const LossSum a = watched.forward_backward(small_batch(), 0.5), b = reference.forward_backward(small_batch(), 0.5);
    EXPECT_EQ(a.sum, b.sum);
    EXPECT_EQ(recording.log, split(std::string(kForward) + ", " + (tied ? kTiedPass : kUntiedPass)));
    // The order the FSDP store's gather window predicts is the one the model followed.
    const AcquireOrder predicted = training_pass_order(c), seen = acquires_of(recording.log, int(c.n_layers) + 1);
    EXPECT_EQ(seen.units, predicted.units);
    EXPECT_EQ(seen.first_backward, predicted.first_backward);
  }
  for (std::size_t u = 0; u < plain.grads().size(); ++u)
    for (std::size_t i = 0; i < plain.grads()[u].flat.size(); ++i)
      ASSERT_EQ(recording.units.grads()[u].flat(i), plain.grads()[u].flat(i)) << "unit " << u << " element " << i;
  recording.log.clear();
  EXPECT_EQ(watched.forward(small_batch()).sum, reference.forward(small_batch()).sum);
  EXPECT_EQ(recording.log, split(std::string(kForward) + (tied ? ", acquire 3, acquire 0, release 0, release 3"
                                                               : ", acquire 3, release 3")));
}

TEST(UnitAccess, UntiedHeadOrder) { check(false, Recompute::None); }
TEST(UnitAccess, TiedHeadOrder) { check(true, Recompute::None); }
TEST(UnitAccess, RecomputeBlocksKeepsTheOrder) { check(false, Recompute::Blocks); }
TEST(UnitAccess, TiedRecomputeBlocksKeepsTheOrder) { check(true, Recompute::Blocks); }

// The check itself works: a store whose copies are poisoned before use makes the loss NaN.
class PoisonedUnits final : public UnitAccess<float> {
 public:
  explicit PoisonedUnits(const ModelConfig& c) : units(c) {}
  const float* acquire(int u) override {
    const auto& flat = units.params()[u].flat;
    copy.assign(flat.size(), std::numeric_limits<float>::quiet_NaN());
    return copy.data();
  }
  void release(int) override {}
  float* gradient(int u) override { return units.grads()[u].flat.data(); }
  void grad_ready(int) override {}
  LocalUnits<float> units;
  std::vector<float> copy;
};

TEST(UnitAccess, ReadingPoisonedParametersShows) {
  const ModelConfig c = small_config(false);
  PoisonedUnits poisoned(c);
  Model<float> model(c, Recompute::None, poisoned);
  EXPECT_TRUE(std::isnan(model.forward(small_batch()).sum));
}

// The fused matrices the model reads as one (QKV; gate and up) start at their first part, and a layout
// whose parts are not stacked rows of one matrix is refused, naming the unit and the part.
TEST(UnitLayout, FusedMatricesAreCheckedToBeStacked) {
  const UnitLayout block = unit_layouts(small_config(false))[1];
  EXPECT_EQ(block.fused({"wq", "wk", "wv"}), block.tensor("wq").offset);
  EXPECT_EQ(block.fused({"w1", "w3"}), block.tensor("w1").offset);
  const auto refused = [&](const UnitLayout& layout, const std::vector<std::string>& parts, const std::string& part) {
    try {
      layout.fused(parts);
      ADD_FAILURE() << "fused matrix accepted, expected '" << part << "' refused";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("unit '" + layout.name + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + part + "' does not continue"), std::string::npos) << what;
    }
  };
  refused(block, {"wk", "wq"}, "wq");          // out of order
  refused(block, {"wq", "wk", "wo"}, "wo");    // wv lies between
  UnitLayout apart = block;                    // wk starts one element after wq's end
  ASSERT_EQ(apart.tensors[2].name, "wk");
  apart.tensors[2].offset += 1;
  refused(apart, {"wq", "wk", "wv"}, "wk");
  UnitLayout narrow{"narrow", {{"a", 0, {2, 4}}, {"b", 8, {2, 3}}}};  // back to back, rows of other lengths
  refused(narrow, {"a", "b"}, "b");
}

}  // namespace
}  // namespace llmtrain::model
