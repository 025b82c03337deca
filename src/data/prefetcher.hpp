// Background preparation of rows: one thread runs the loader's forward path (read, decompress, tokenize,
// pack, shuffle) ahead of the trainer, into a bounded queue.
//
// "State = consumed" survives the prefetch without any per-row snapshot: the producer's own state after
// producing the queued rows, plus those rows (as spans) to be handed out first, resumes to exactly what an
// uninterrupted run would hand out next. save_consumed() pauses the producer between two rows to take both
// consistently. A producer error is kept and rethrown by pop() once the rows produced before it are handed
// out; the destructor stops and joins the thread whatever state it is in.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "loader_impl.hpp"

namespace llmtrain::data {

class Loader::Prefetcher {
 public:
  Prefetcher(Loader::Impl& impl, std::size_t capacity);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  PackedRow pop();              // blocks until a row is ready; rethrows the producer's error
  SavedState save_consumed();   // the state as of the rows popped so far
  LoaderStats stats();

 private:
  void run();

  Loader::Impl& impl_;
  const std::size_t capacity_;
  std::mutex producer_;  // held while the producer makes a row and queues it; always taken before queue_mutex_
  std::mutex queue_mutex_;
  std::condition_variable ready_, space_;
  std::deque<PackedRow> queue_;
  std::exception_ptr error_;
  bool stop_ = false, finished_ = false;
  std::thread thread_;  // last: starts after everything above is constructed
};

}  // namespace llmtrain::data
