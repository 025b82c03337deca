// Parameters and gradients grouped in units: the embedding, each transformer block, and the head (final
// norm plus the untied output matrix). Each unit is ONE contiguous flat buffer with named tensor slices.
//
// Why units: the FSDP layer shards and all-gathers whole units, the optimizer walks flat buffers, and
// checkpoints write each unit's tensors by name. A unit's layout is fixed by the config alone, so every
// rank computes the same layout without communication.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "llmtrain/core/model_config.hpp"

namespace llmtrain::model {

struct TensorSlice {
  std::string name;                  // e.g. "wq", "attn_norm"
  std::int64_t offset = 0;           // first element within the unit's flat buffer
  std::vector<std::int64_t> shape;   // row-major
  bool is_norm_or_embedding = false; // AdamW skips weight decay on these unless configured otherwise
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
};

// The layout of one unit (no storage): its name and tensor slices.
struct UnitLayout {
  std::string name;  // "embedding", "block.0", ..., "head"
  std::vector<TensorSlice> tensors;
  std::int64_t size() const { return tensors.empty() ? 0 : tensors.back().offset + tensors.back().size(); }
  const TensorSlice& tensor(const std::string& tensor_name) const;
  // The offset of a fused matrix: the matrices `parts`, with equal row lengths, stacked in this order, each
  // starting where the one before ends (wq, wk, wv read as one QKV matrix). Throws llmtrain::Error naming
  // the unit and the parts when they are not laid out so.
  std::int64_t fused(const std::vector<std::string>& parts) const;
};

// Units in forward order: embedding, block.0 .. block.{n_layers-1}, head.
// Block tensor order puts wq, wk, wv next to each other (one fused QKV gemm) and w1, w3 likewise: the model
// reads them through UnitLayout::fused.
std::vector<UnitLayout> unit_layouts(const ModelConfig& config);

// A unit's flat buffer, or the part [begin, begin + flat.size()) of it that this rank keeps (an FSDP shard).
template <typename T>
struct ParamUnit {
  UnitLayout layout;
  Kokkos::View<T*> flat;
  std::int64_t begin = 0;
  std::int64_t end() const { return begin + std::int64_t(flat.size()); }
  // A tensor's first element; the buffer must hold the whole unit.
  T* data(const std::string& tensor_name) const { return flat.data() + layout.tensor(tensor_name).offset; }
};

// One flat buffer per unit, zero-initialised (used for parameters, gradients and optimizer moments).
template <typename T>
std::vector<ParamUnit<T>> allocate_units(const std::vector<UnitLayout>& layouts, const std::string& label);

// Zero-initialised buffers shaped like `shapes` (same layouts and ranges): optimizer moments of shards.
template <typename T>
std::vector<ParamUnit<T>> allocate_like(const std::vector<ParamUnit<T>>& shapes, const std::string& label);

// Sum of the squares of every element (accumulated in double, in a fixed order): the local part of a
// gradient norm.
double sum_of_squares(const std::vector<ParamUnit<float>>& units);

}  // namespace llmtrain::model
