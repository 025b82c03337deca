// Bytes held in Kokkos allocations (every View: parameters, gradients, optimizer moments, gathered units,
// gradient and wire buffers, activations), counted by Kokkos' tools callbacks: the tracking allocator
// behind mem.peak_bytes. Installing it replaces the allocation callbacks of a Kokkos tool library
// (KOKKOS_TOOLS_LIBS), which then no longer sees allocations.
#pragma once

#include <cstdint>

namespace llmtrain::parallel {

// Starts counting (idempotent). Allocations made before are not counted, nor are their deallocations.
void track_memory();
std::int64_t live_bytes();
// The highest live_bytes() since the last call (or since track_memory()); the next period starts at the
// current live bytes.
std::int64_t take_peak_bytes();

}  // namespace llmtrain::parallel
