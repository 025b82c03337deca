// A Chrome trace of one rank (log.trace): what compute did with each unit and when communication ran, on
// two tracks, written as <run_dir>/trace.rank<R>.json for chrome://tracing or Perfetto
// (https://ui.perfetto.dev). The stores record into it: compute spans from acquire to release of each unit
// and the waits for communication on the compute track; each all-gather and each reduction, from issue to
// completion as the store observed it, on the communication track. Events are kept in memory (a few per
// unit and micro-batch) and written by write().
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace llmtrain::parallel {

class Trace {
 public:
  enum Track { compute = 1, communication = 2 };

  explicit Trace(int rank);
  // Microseconds since the trace began.
  double now_us() const;
  void span(Track track, const std::string& name, double begin_us, double end_us);
  // Writes every event so far as Chrome trace JSON to `path`. Throws llmtrain::Error naming the path.
  void write(const std::string& path) const;
  std::size_t events() const { return events_.size(); }

 private:
  struct Event {
    Track track;
    std::string name;
    double begin_us, end_us;
  };
  int rank_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Event> events_;
};

}  // namespace llmtrain::parallel
