// Which part of each unit a rank writes to a checkpoint (shared by the writer and the background writer's
// snapshot, which copies only that part).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "llmtrain/model/param_units.hpp"

namespace llmtrain::ckpt {

// The part [lo, hi) of each unit this rank writes. Ranks holding the same range (all of them when replicated,
// the replica groups' members under HSDP) split it evenly among themselves in rank order, so every element
// is written, and counted in the checksum, exactly once, and every rank shares the work. Collective.
std::vector<std::pair<std::int64_t, std::int64_t>> owned_ranges(const std::vector<model::ParamUnit<float>>& units,
                                                               MPI_Comm comm, int rank, int size);

}  // namespace llmtrain::ckpt
