// The loader's own rule for when the prefetch thread pays (LoaderOptions::prefetch_chooser left empty).
//
// A prefetch thread overlaps making the next batch with the caller's work on this one. The overlap saves
// at most the caller's work, and the hand-off between two cores costs about a fifth of making a batch of
// pre-tokenized rows (wake-ups, the ring's cache footprint, recording and replaying the Progress; perf/RESULTS.md,
// "Item 3"). So while the caller works less than a tenth of the time a batch takes to make (a benchmark, a
// tool, a trainer far faster than its data), the thread costs more CPU and more wall time than it saves, and
// the batches are made in the caller's thread; once the caller works more than a fifth of it, the thread
// starts again. The two thresholds leave a band in which the mode stays, so that a caller near one of them
// does not flip back and forth. Decided on sums over windows of batches, never on one batch alone. It starts
// in the caller's thread: a thread started and left after the first window slowed the rest of a run that
// never needed it by 2-3 % (its allocations stay in its malloc arena; perf/RESULTS.md).
#pragma once

#include <cstdint>

#include "llmtrain/data/loader.hpp"

namespace llmtrain::data {

class AdaptivePrefetch {
 public:
  static constexpr std::int64_t kWindow = 8;     // batches per decision
  static constexpr double kInlineBelow = 0.10;   // caller's work / make time under which the caller makes them
  static constexpr double kThreadAbove = 0.20;   // ... over which the thread makes them again

  bool operator()(const PrefetchTiming& t) {
    caller_s_ += t.caller_s;
    make_s_ += t.make_s;
    if (++batches_ < kWindow) return thread_;
    if (thread_ && caller_s_ < kInlineBelow * make_s_) thread_ = false;
    else if (!thread_ && caller_s_ > kThreadAbove * make_s_) thread_ = true;
    batches_ = 0;
    caller_s_ = make_s_ = 0;
    return thread_;
  }

 private:
  bool thread_ = false;
  std::int64_t batches_ = 0;
  double caller_s_ = 0, make_s_ = 0;
};

}  // namespace llmtrain::data
