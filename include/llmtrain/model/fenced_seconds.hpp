// Timing work that runs on the Kokkos device: kernels may still be running when the host reaches the end of
// a phase (CUDA launches return at once), so a phase's time is read after a fence. Used for the model's
// forward / backward times and the trainer's optimizer time.
#pragma once

#include <Kokkos_Core.hpp>

#include "llmtrain/core/timer.hpp"

namespace llmtrain::model {

// Seconds since `watch` started, once the work queued before the call has finished.
inline double fenced_seconds(const Stopwatch& watch) {
  Kokkos::fence();
  return watch.seconds();
}

}  // namespace llmtrain::model
