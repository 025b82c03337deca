// How a run shares its parameters across ranks (parallel.* in the configuration), and the one function
// that builds the matching store. docs/parallel.md describes the strategies, the window and the memory.
#pragma once

#include <memory>
#include <string>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/parallel/param_store.hpp"

namespace llmtrain::parallel {

struct StoreOptions {
  std::string strategy = "replicated";  // "replicated", "fsdp" (shard over all ranks), "hsdp"
  int shard_group_size = 0;             // hsdp: ranks per shard group, dividing the world size
  int max_inflight_units = 2;           // K: units gathered or being gathered at once
  int max_inflight_reductions = 2;      // R: gradient reductions in flight at once
  bool reshard_after_forward = true;    // false: units stay gathered from forward to backward
  dist::DType comm_dtype = dist::DType::f32;  // f32 or bf16 on the wire; master weights stay fp32
};

// `comm` spans the data-parallel ranks and must outlive the store. Throws llmtrain::Error naming the
// parallel.* key of a bad option. With `device` (a CUDA backend, which must outlive the store) the units live in
// its memory: the replicated store only (fsdp and hsdp keep host shards until issue 29's device stores).
std::unique_ptr<ParamStore> make_store(const ModelConfig& config, const StoreOptions& options,
                                       dist::Collectives& comm, model::Backend<float>* device = nullptr);

}  // namespace llmtrain::parallel
