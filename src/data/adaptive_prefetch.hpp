// The loader's own rule for when the prefetch thread pays (LoaderOptions::prefetch_chooser left empty).
//
// A prefetch thread overlaps making the next batch with the caller's work on this one. The overlap saves
// at most the caller's work, and the hand-off between two cores costs about a fifth of making a batch of
// pre-tokenized rows (wake-ups, the ring's cache footprint, recording and replaying the Progress; perf/RESULTS.md,
// "Pre-tokenized input and the prefetch thread"), so the two modes take the same wall time where the caller works about a fifth of the make time.
// Under a tenth (a benchmark, a tool, a trainer far faster than its data) the thread costs more CPU and more
// wall time than it saves, and the batches are made in the caller's thread; over a quarter the thread makes
// them. In between the mode stays. Decided on sums over windows of batches, never on one batch alone.
//
// A switch costs a thread start or a drain of the ring, and a caller near the band (or a producer slowed by
// other processes, which inflates the make times it reports) could switch back and forth at every window:
// measured, about a quarter fewer tokens per second than either mode. So each switch doubles the window before the
// next decision, up to kMaxWindow batches. It starts in the caller's thread: a thread started and left after
// the first window slowed the rest of a run that never needed it by 2-3 % (perf/RESULTS.md).
#pragma once

#include <algorithm>
#include <cstdint>

#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

class AdaptivePrefetch {
 public:
  static constexpr std::int64_t kFirstWindow = 8;  // batches per decision, until the first switch
  static constexpr std::int64_t kMaxWindow = 4096;
  static constexpr double kInlineBelow = 0.10;     // caller's work / make time under which the caller makes them
  static constexpr double kThreadAbove = 0.25;     // ... over which the thread makes them

  bool operator()(const PrefetchTiming& t) {
    caller_s_ += t.caller_s;
    make_s_ += t.make_s;
    if (++batches_ < window_) return thread_;
    const bool was = thread_;
    if (thread_ && caller_s_ < kInlineBelow * make_s_) thread_ = false;
    else if (!thread_ && caller_s_ > kThreadAbove * make_s_) thread_ = true;
    if (thread_ != was) window_ = std::min(2 * window_, kMaxWindow);
    batches_ = 0;
    caller_s_ = make_s_ = 0;
    return thread_;
  }
  std::int64_t window() const { return window_; }  // batches of the current decision

 private:
  bool thread_ = false;
  std::int64_t window_ = kFirstWindow, batches_ = 0;
  double caller_s_ = 0, make_s_ = 0;
};

}  // namespace llmtrain::data
