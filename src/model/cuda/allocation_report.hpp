// Device allocations reported to the process's tracking allocator (parallel/memory_tracker.hpp), which
// listens to Kokkos' tools callbacks: memory that Kokkos does not allocate (the CUDA backend's cudaMalloc)
// counts towards mem.peak_bytes as Views do. Kokkos is only the messenger here; nothing is allocated by it.
#pragma once

#include <cstdint>

namespace llmtrain::model {

void report_device_allocation(const char* label, const void* data, std::int64_t bytes);
void report_device_free(const void* data, std::int64_t bytes);

}  // namespace llmtrain::model
