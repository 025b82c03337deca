// Background row preparation (see prefetcher.hpp).
#include "prefetcher.hpp"

#include <algorithm>

namespace llmtrain::data {

Loader::Prefetcher::Prefetcher(Loader::Impl& impl, std::size_t capacity)
    : impl_(impl), capacity_(capacity), thread_([this] { run(); }) {}

Loader::Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    stop_ = true;
  }
  space_.notify_all();
  thread_.join();
}

void Loader::Prefetcher::run() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      space_.wait(lock, [this] { return stop_ || queue_.size() < capacity_; });
      if (stop_) break;
    }
    try {
      // The row enters the queue before the producer lock is released: save_consumed() and stats() never
      // see a row that has left the loader's state but is not yet queued.
      std::lock_guard<std::mutex> producing(producer_);
      PackedRow row = impl_.next_row();
      std::lock_guard<std::mutex> lock(queue_mutex_);
      queue_.push_back(std::move(row));
    } catch (...) {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      error_ = std::current_exception();
      break;
    }
    ready_.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    finished_ = true;
  }
  ready_.notify_all();
}

PackedRow Loader::Prefetcher::pop() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  ready_.wait(lock, [this] { return !queue_.empty() || finished_; });
  if (queue_.empty()) std::rethrow_exception(error_);
  PackedRow row = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  space_.notify_one();
  return row;
}

SavedState Loader::Prefetcher::save_consumed() {
  std::lock_guard<std::mutex> producer(producer_);
  std::lock_guard<std::mutex> lock(queue_mutex_);
  SavedState state = impl_.save();
  std::vector<std::vector<Span>> queued;
  for (const PackedRow& row : queue_) queued.push_back(row.spans);
  state.ready.insert(state.ready.begin(), queued.begin(), queued.end());
  return state;
}

LoaderStats Loader::Prefetcher::stats() {
  std::lock_guard<std::mutex> producer(producer_);
  std::lock_guard<std::mutex> lock(queue_mutex_);
  LoaderStats stats = impl_.stats();
  for (const PackedRow& row : queue_)  // rows still to hand out keep their epoch open
    for (const Span& span : row.spans) {
      std::uint32_t& epoch = stats.datasets[span.doc.dataset].epoch;
      epoch = std::min(epoch, span.doc.epoch);
    }
  return stats;
}

}  // namespace llmtrain::data
