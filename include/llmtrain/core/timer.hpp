// Wall-clock timing: a Stopwatch, and a ScopedTimer that adds the time of a scope to an accumulator
// (the trainer splits each step into data wait / forward / backward / optimizer with these).
#pragma once

#include <chrono>

namespace llmtrain {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

class ScopedTimer {
 public:
  explicit ScopedTimer(double& accumulator_seconds) : accumulator_(accumulator_seconds) {}
  ~ScopedTimer() { accumulator_ += watch_.seconds(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double& accumulator_;
  Stopwatch watch_;
};

}  // namespace llmtrain
