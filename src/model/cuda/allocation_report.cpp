// Reporting device allocations through Kokkos' tools interface (see allocation_report.hpp).
#include "allocation_report.hpp"

#include <Kokkos_Core.hpp>

namespace llmtrain::model {
namespace {

Kokkos::Tools::SpaceHandle device_space() { return Kokkos::Tools::make_space_handle("Cuda"); }

}  // namespace

void report_device_allocation(const char* label, const void* data, std::int64_t bytes) {
  Kokkos::Tools::allocateData(device_space(), label, data, std::uint64_t(bytes));
}

void report_device_free(const void* data, std::int64_t bytes) {
  Kokkos::Tools::deallocateData(device_space(), "device buffer", data, std::uint64_t(bytes));
}

}  // namespace llmtrain::model
