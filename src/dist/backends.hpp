// The collectives backends' factories, for make_collectives (collectives.cpp), for the NCCL backend (which
// keeps an MPI communicator for host-side agreement) and for tests.
#pragma once

#include <cstddef>
#include <memory>

#include "llmtrain/dist/collectives.hpp"

namespace llmtrain::dist {

// MPI counts are int: larger operations are issued as several MPI operations of at most this many
// elements, completed together by one Request. Tests pass a small limit to exercise that path.
constexpr std::size_t kMpiMaxChunk = std::size_t(1) << 30;

// A communicator spanning all ranks of the runtime (a duplicate of its world communicator).
std::unique_ptr<Collectives> make_mpi_collectives(const Runtime& runtime, std::size_t max_chunk = kMpiMaxChunk);

#ifdef LLMTRAIN_WITH_CUDA
// On the device the caller selected; collective_timeout_s as make_collectives's.
std::unique_ptr<Collectives> make_nccl_collectives(const Runtime& runtime, double collective_timeout_s);  // src/dist/cuda/
#endif

}  // namespace llmtrain::dist
