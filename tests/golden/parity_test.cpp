// Parity with PyTorch (reference.{json,bin}, made by make_reference.py in float64): logits, loss, every
// parameter gradient, and the losses of 10 AdamW steps of the same model from the same weights.
//
// Tolerances (relative, stated once here): the float32 model must match the float64 reference with
//   logits:       max |diff| <= 1e-5 * max |logit|
//   loss:         |diff| <= 1e-6 * loss
//   each gradient tensor: ||diff||_2 <= 1e-5 * ||ref||_2
//   10 AdamW losses: |diff| <= 1e-5 * loss
// The double-precision model runs the same code and must match to 1e-6/1e-7/1e-6 (the reference arrays are
// stored as float32, which bounds how close it can get).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llmtrain/train/trainer.hpp"
#include "test_sources.hpp"

namespace llmtrain {
namespace {

struct Reference {
  nlohmann::json meta;
  std::vector<float> blob;

  Reference() {
    const std::string dir = std::string(LLMTRAIN_SOURCE_DIR) + "/tests/golden/";
    std::ifstream json_in(dir + "reference.json");
    EXPECT_TRUE(json_in.good()) << dir << "reference.json";
    meta = nlohmann::json::parse(json_in);
    std::ifstream bin(dir + "reference.bin", std::ios::binary | std::ios::ate);
    blob.resize(std::size_t(bin.tellg()) / sizeof(float));
    bin.seekg(0);
    bin.read(reinterpret_cast<char*>(blob.data()), std::streamsize(blob.size() * sizeof(float)));
  }
  const float* array(const std::string& name) const { return blob.data() + meta["arrays"][name]["offset"].get<std::size_t>(); }

  ModelConfig config() const {
    const auto& c = meta["config"];
    ModelConfig m;
    m.vocab_size = c["vocab_size"];
    m.d_model = c["dim"];
    m.n_layers = c["n_layers"];
    m.n_heads = c["n_heads"];
    m.n_kv_heads = c["n_kv_heads"];
    m.d_ff = c["ffn_hidden"];
    m.max_seq_len = c["max_seq_len"];
    m.rope_theta = c["rope_theta"];
    m.norm_eps = c["norm_eps"];
    m.tie_embeddings = c["tied_embeddings"];
    m.mask_documents = c["doc_masking"];
    m.ignore_index = c["ignore_index"];
    return m;
  }
  Batch batch() const {
    Batch b;
    b.rows = meta["batch"]["rows"];
    b.seq_len = meta["batch"]["seq_len"];
    b.tokens = meta["batch"]["tokens"].get<std::vector<std::int32_t>>();
    b.doc_index = meta["batch"]["doc_index"].get<std::vector<std::int32_t>>();
    return b;
  }
  template <typename T>
  void load_weights(std::vector<model::ParamUnit<T>>& params) const {
    for (auto& unit : params)
      for (const auto& t : unit.layout.tensors) {
        const float* w = array("weights." + unit.layout.name + "." + t.name);
        for (std::int64_t i = 0; i < t.size(); ++i) unit.flat(t.offset + i) = T(w[i]);
      }
  }
};

template <typename T>
void expect_forward_backward_parity(double logit_tol, double loss_tol, double grad_tol) {
  const Reference ref;
  model::LocalUnits<T> units(ref.config());
  model::Model<T> model(ref.config(), model::Recompute::None, units);
  ref.load_weights(units.params());
  const auto batch = ref.batch();
  const auto logits = model.logits(batch);
  const float* ref_logits = ref.array("logits");
  double max_diff = 0, max_logit = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(double(logits[i]) - double(ref_logits[i])));
    max_logit = std::max(max_logit, std::abs(double(ref_logits[i])));
  }
  EXPECT_LE(max_diff, logit_tol * max_logit);
  units.zero_grads();
  const double loss = model.forward_backward(batch, 1.0).mean();
  const double ref_loss = ref.meta["loss"];
  EXPECT_NEAR(loss, ref_loss, loss_tol * ref_loss);
  int checked = 0;
  for (const auto& unit : units.grads())
    for (const auto& t : unit.layout.tensors) {
      const float* g = ref.array("grads." + unit.layout.name + "." + t.name);
      double diff = 0, norm = 0;
      for (std::int64_t i = 0; i < t.size(); ++i) {
        const double d = double(unit.flat(t.offset + i)) - double(g[i]);
        diff += d * d;
        norm += double(g[i]) * double(g[i]);
      }
      EXPECT_LE(std::sqrt(diff), grad_tol * std::sqrt(norm)) << unit.layout.name << "." << t.name;
      ++checked;
    }
  EXPECT_EQ(checked, 2 + 9 * ref.config().n_layers + 1);
}

TEST(GoldenParity, Float32ForwardBackward) { expect_forward_backward_parity<float>(1e-5, 1e-6, 1e-5); }
TEST(GoldenParity, Float64ForwardBackward) { expect_forward_backward_parity<double>(1e-6, 1e-7, 1e-6); }

// The same fixed batch every step.
class FixedSource : public BatchSource {
 public:
  explicit FixedSource(Batch b) : batch_(std::move(b)) {}
  Batch next() override { return batch_; }

 private:
  Batch batch_;
};

TEST(GoldenParity, TenAdamWSteps) {
  const Reference ref;
  const auto& t = ref.meta["train"];
  train::TrainOptions options;
  options.steps = t["steps"];
  options.grad_clip = t["grad_clip"];
  options.schedule.lr = t["lr"];
  options.schedule.min_lr = t["min_lr"];
  options.schedule.warmup_steps = t["warmup_steps"];
  options.peak_flops = 1e11;
  optim::AdamWOptions adamw;
  adamw.beta1 = t["beta1"];
  adamw.beta2 = t["beta2"];
  adamw.eps = t["eps"];
  adamw.weight_decay = t["weight_decay"];
  testing::SingleRankCollectives comm;
  testing::TrainingRun run(ref.config(), options, comm, "none", adamw);
  ref.load_weights(run.store.param_shards());
  FixedSource source(ref.batch());
  const auto history = run.trainer.run(source);
  const auto expected = ref.meta["adamw_losses"].get<std::vector<double>>();
  ASSERT_EQ(history.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(history[i].loss, expected[i], 1e-5 * expected[i]) << "step " << i + 1;
}

}  // namespace
}  // namespace llmtrain
