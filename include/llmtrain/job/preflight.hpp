// `llmtrain --preflight input.toml`: what can be checked before a run spends its allocation, checked on
// every rank and reported once with a diagnosis per problem:
//   - the configuration loads (the same checks as a run);
//   - the tokenizer loads; every corpus file of every dataset opens and reads, on every node;
//   - train.device resolves on every rank as the run will resolve it ("cuda" without a GPU per rank, a
//     problem; docs/gpu.md);
//   - the run directory (where checkpoints go) can be created and written on every node, and has room for
//     two checkpoints of the model (the new one is written before the previous one is removed);
//   - the interfaces named by NCCL_SOCKET_IFNAME and OMPI_MCA_{btl,oob}_tcp_if_include exist and are up on
//     every host (with NCCL's prefix-matching traps named), and the ranks reach each other over the chosen
//     one (a TCP ring);
//   - the RDMA ports named by NCCL_IB_HCA exist and are active, and NCCL_IB_GID_INDEX exists on RoCE ports.
// Returns 0 when every check passed, 1 otherwise (on every rank).
#pragma once

#include <string>
#include <vector>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

int run_preflight(const std::string& config_path, const std::vector<std::string>& overrides, dist::Runtime& runtime);

}  // namespace llmtrain::job
