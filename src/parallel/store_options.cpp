// The store for a strategy (see store_options.hpp).
#include "llmtrain/parallel/store_options.hpp"

#include "llmtrain/core/error.hpp"
#include "llmtrain/parallel/fsdp_store.hpp"
#include "llmtrain/parallel/replicated_store.hpp"

namespace llmtrain::parallel {

std::unique_ptr<ParamStore> make_store(const ModelConfig& config, const StoreOptions& options, dist::Collectives& comm,
                                       model::Backend<float>* device) {
  if (options.strategy == "replicated") return std::make_unique<ReplicatedStore>(config, comm, options, device);
  LLMTRAIN_CHECK(!device, "parallel.strategy = \"", options.strategy, "\" keeps its shards in host memory: the device ",
                 "stores of fsdp and hsdp come with issue 29");
  if (options.strategy == "fsdp" || options.strategy == "hsdp") return std::make_unique<FsdpStore>(config, options, comm);
  LLMTRAIN_FAIL("parallel.strategy: \"", options.strategy, "\" is not one of replicated, fsdp, hsdp");
}

}  // namespace llmtrain::parallel
