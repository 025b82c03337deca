// Variable-size byte strings from every rank to every rank, over MPI on the host: how ranks agree on
// small metadata such as the data loaders' state blobs (never tensor traffic).
#pragma once

#include <string>
#include <vector>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {

// Collective over the runtime's ranks: element r of the result is rank r's `mine`.
std::vector<std::string> all_gather_bytes(const Runtime& runtime, const std::string& mine);

}  // namespace llmtrain::dist
