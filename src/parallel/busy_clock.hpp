// Wall time during which something was true (a gather in flight, compute blocked on communication),
// measured at the moments the store changes or observes its state.
#pragma once

#include <chrono>

namespace llmtrain::parallel {

class BusyClock {
 public:
  void set(bool busy) {
    const auto now = std::chrono::steady_clock::now();
    if (busy_ && !busy) total_ += std::chrono::duration<double>(now - since_).count();
    if (!busy_ && busy) since_ = now;
    busy_ = busy;
  }
  // Seconds busy since the last take, the current busy stretch included up to now.
  double take() {
    const bool was = busy_;
    set(false);
    const double out = total_;
    total_ = 0;
    set(was);
    return out;
  }

 private:
  bool busy_ = false;
  double total_ = 0;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace llmtrain::parallel
