// Counting Kokkos allocations through the tools callbacks (see memory_tracker.hpp).
#include "llmtrain/parallel/memory_tracker.hpp"

#include <Kokkos_Core.hpp>

#include <atomic>
#include <mutex>
#include <unordered_set>

namespace llmtrain::parallel {
namespace {

std::atomic<std::int64_t> g_live{0}, g_peak{0};
// Pointers allocated while tracking: a deallocation of memory allocated before tracking began is ignored.
std::mutex g_mutex;
std::unordered_set<const void*> g_tracked;

void on_allocate(const Kokkos_Profiling_SpaceHandle, const char*, const void* ptr, const std::uint64_t size) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_tracked.insert(ptr);
  }
  const std::int64_t live = g_live += std::int64_t(size);
  std::int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
}

void on_deallocate(const Kokkos_Profiling_SpaceHandle, const char*, const void* ptr, const std::uint64_t size) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_tracked.erase(ptr) == 0) return;
  }
  g_live -= std::int64_t(size);
}

}  // namespace

void track_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    Kokkos::Tools::Experimental::set_allocate_data_callback(on_allocate);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(on_deallocate);
  });
}

std::int64_t live_bytes() { return g_live.load(); }

std::int64_t take_peak_bytes() { return g_peak.exchange(g_live.load()); }

}  // namespace llmtrain::parallel
