// A Llama/Granite-style decoder: token embedding, n_layers pre-norm blocks (RMSNorm, rotary grouped-query
// causal attention, SwiGLU MLP), final RMSNorm, output head (tied or untied), cross-entropy loss.
//
// The model owns its parameters and gradients as units (param_units.hpp) and the activations of one
// micro-batch. forward_backward() runs one forward and the exact hand-written backward pass and ADDS the
// gradients into grads(), so gradient accumulation is repeated calls between zero_grads(). Templated on the
// scalar: float for training, double for the finite-difference gradient checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::model {

// "none" keeps every block's activations; "blocks" keeps only each block's input and recomputes the block
// in the backward pass (about one extra forward pass, activation memory ~1/10).
enum class Recompute { None, Blocks };
Recompute parse_recompute(const std::string& name);  // throws llmtrain::Error on anything else

struct LossSum {
  double sum = 0;          // summed cross-entropy over counted targets
  std::int64_t count = 0;  // targets not equal to ignore_index
  double mean() const { return count > 0 ? sum / double(count) : 0.0; }
};

// Wall time of the last forward_backward(): forward runs through the loss, including the output head's
// gradient, which is computed chunk by chunk together with the logits; backward is the rest.
struct PassTimes {
  double forward_s = 0;
  double backward_s = 0;
};

template <typename T>
class Model {
 public:
  explicit Model(const ModelConfig& config, Recompute recompute = Recompute::None);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const;
  std::vector<ParamUnit<T>>& params();
  std::vector<ParamUnit<T>>& grads();

  // Llama-style initialisation from config.seed (init.hpp): normal(0, init_std) matrices, output projections
  // (wo, w2) scaled by 1/sqrt(2 n_layers), norm weights 1. Same seed, same weights, on any rank count.
  void init_weights();
  void zero_grads();

  // Adds the gradient of (grad_scale * mean loss over the batch's counted targets) into grads().
  LossSum forward_backward(const Batch& batch, double grad_scale);
  // Loss only (evaluation); keeps no activations for backward.
  LossSum forward(const Batch& batch);
  // Logits [rows * seq_len, vocab] of every position (tests and small models only: this is the tensor the
  // chunked head otherwise never materialises).
  std::vector<T> logits(const Batch& batch);
  const PassTimes& last_pass_times() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace llmtrain::model
