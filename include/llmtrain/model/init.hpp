// Keyed initialisation: every initial weight is a pure function of (model seed, tensor name qualified by
// its unit, e.g. "block.3.wq", element index within the tensor). Any range of any unit's flat buffer can
// therefore be initialised alone, and the result is bitwise the same whatever the range boundaries: the
// sharded (FSDP) store initialises only its 1/S of each unit, the replicated store the whole unit, and both
// hold the same weights for any rank count and any sharding.
//
// Llama-style rules: 1-D tensors (the norm weights) are 1; matrices are normal(0, init_std), with the
// output projections wo and w2 scaled by 1/sqrt(2 n_layers). The normals come from Philox-4x32-10 and the
// Box-Muller transform, computed in double and rounded once to T (src/model/init.cpp).
#pragma once

#include <cstdint>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::model {

// Writes the initial values of elements [begin, end) of `unit`'s flat buffer to out[0 .. end - begin).
// The range may cut tensors anywhere and span several; elements at or past unit.size() are padding (a
// sharded store rounds units up to a multiple of the shard count) and are left untouched.
// Throws llmtrain::Error unless 0 <= begin <= end.
template <typename T>
void init_unit_range(const ModelConfig& config, const UnitLayout& unit, std::int64_t begin, std::int64_t end,
                     T* out);

}  // namespace llmtrain::model
