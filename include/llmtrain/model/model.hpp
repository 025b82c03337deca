// A Llama/Granite-style decoder: token embedding, n_layers pre-norm blocks (RMSNorm, rotary grouped-query
// causal attention, SwiGLU MLP), final RMSNorm, output head (tied or untied), cross-entropy loss.
//
// The model owns the activations of one micro-batch; its parameters and gradients live in a unit store
// (unit_access.hpp) that it reaches unit by unit through acquire / release / gradient / grad_ready, so
// the same code runs replicated or sharded. Every operation runs through a backend (backend.hpp), in whose
// memory the activations live, so the same code runs on the host or on a GPU. forward_backward() runs one
// forward and the exact hand-written backward pass and ADDS the gradients into the store's buffers, so
// gradient accumulation is repeated calls between the store's zeroing. Templated on the scalar: float for
// training, double for the finite-difference gradient checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/model/unit_access.hpp"

namespace llmtrain::model {

// "none" keeps every block's activations; "blocks" keeps only each block's input and recomputes the block
// in the backward pass (about one extra forward pass, activation memory ~1/10).
enum class Recompute { None, Blocks };

template <typename T>
class KvCache;  // decoder.hpp
Recompute parse_recompute(const std::string& name);  // throws llmtrain::Error on anything else

// Wall time of the last forward_backward(): forward runs through the logits and the loss; backward is the
// rest, including the output head's gradient products, which run chunk by chunk beside the logits.
struct PassTimes {
  double forward_s = 0;
  double backward_s = 0;
};

template <typename T>
class Model {
 public:
  // `units` must outlive the model and hold units laid out by unit_layouts(config), in the memory of
  // `backend`, which must outlive the model too. `precision`: of the matrix products (gemm.hpp); parameters,
  // gradients, activations and the loss stay in T.
  Model(const ModelConfig& config, Recompute recompute, UnitAccess<T>& units, Backend<T>& backend,
        Precision precision = Precision::Fp32);
  // On a host backend of its own.
  Model(const ModelConfig& config, Recompute recompute, UnitAccess<T>& units, Precision precision = Precision::Fp32);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const;

  // Adds the gradient of (grad_scale * mean loss over the batch's counted targets) into the store's
  // gradient buffers.
  LossSum forward_backward(const Batch& batch, double grad_scale);
  // Loss only (evaluation); keeps no activations for backward.
  LossSum forward(const Batch& batch);
  // Logits [rows * seq_len, vocab] of every position (tests and small models only: this is the tensor the
  // chunked head otherwise never materialises).
  std::vector<T> logits(const Batch& batch);
  // Incremental decoding (decoder.hpp, which drives it): the batch's inputs (targets unused) run through the
  // same blocks with their keys and values kept in `cache`. With the cache empty, the rows start at position
  // 0 and attend as in training (a prefill); otherwise seq_len is 1 and row r's token sits at position
  // cache.length(r), attending to the cached keys. The caller advances the cache's lengths. Returns the
  // logits [rows, vocab] of each row's input position last[r]. Host backend only (the cache is host memory).
  std::vector<T> decode(const Batch& batch, KvCache<T>& cache, const std::vector<std::int64_t>& last);
  const PassTimes& last_pass_times() const;
  // The backend the model runs on; on a device, its memory's peak is the run's device memory peak.
  Backend<T>& backend() const;

  // Bytes a model allocates itself, beside the store's units, once it has run micro-batches of rows x
  // seq_len: the RoPE tables, the batch's token ids, the residual stream, the activations backward keeps
  // (one block's with recompute = blocks), the backward scratch, the head's chunk of logits and the attention
  // tiles, as the host backend allocates them (the CUDA backend's attention workspace differs). The dry run's
  // memory estimate counts this; the bf16 head copies (host memory, on AVX512_BF16 CPUs) come on top.
  static std::int64_t own_bytes(const ModelConfig& config, Recompute recompute, std::int64_t rows,
                                std::int64_t seq_len);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace llmtrain::model
