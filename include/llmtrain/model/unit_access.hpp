// How the model reaches its parameters and gradients: unit by unit, through a store.
//
// The model is written as if it were whole; a store decides where each unit lives. The replicated store
// keeps every unit whole on every rank and its hooks do nothing; the FSDP store keeps 1/S of each unit,
// all-gathers it in acquire() and reduce-scatters its gradient after grad_ready(). The model's promises:
//   - forward reads a unit's parameters only between acquire(u) and release(u), in forward order
//     (embedding, block.0 .. block.{L-1}, head); backward does the same in reverse;
//   - gradient(u) is written (accumulated into) only after the first acquire(u) of the backward pass and
//     before grad_ready(u), which comes exactly once per backward pass, when u's gradient is complete.
// docs/model.md gives the exact sequence, including the tied embedding used at both ends. The buffers
// handed out lie in the memory of the model's backend (backend.hpp): host memory, or device memory for the
// CUDA backend.
#pragma once

#include <cstddef>
#include <vector>

#include "llmtrain/core/model_config.hpp"

namespace llmtrain::model {

// The acquires of one forward_backward (docs/model.md, "Unit access"): the unit of each, in order, and the
// position of the first backward block's. Defined beside forward_backward (model.cpp), which follows it
// (model_unit_access_test compares a recorded pass with it); the FSDP store's gather window predicts from it.
struct AcquireOrder {
  std::vector<int> units;
  std::size_t first_backward = 0;
};
AcquireOrder training_pass_order(const ModelConfig& config);

template <typename T>
class UnitAccess {
 public:
  virtual ~UnitAccess() = default;
  // The unit's whole flat parameter buffer (UnitLayout order), valid until the matching release().
  virtual const T* acquire(int unit) = 0;
  virtual void release(int unit) = 0;
  // The unit's whole flat gradient buffer, to accumulate into; valid until grad_ready(unit).
  virtual T* gradient(int unit) = 0;
  virtual void grad_ready(int unit) = 0;
};

}  // namespace llmtrain::model
