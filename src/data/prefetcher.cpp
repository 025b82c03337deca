// Background batch preparation (see prefetcher.hpp).
#include "prefetcher.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {

Loader::Prefetcher::Prefetcher(Loader::Impl& impl, std::size_t batches)
    : impl_(impl), ring_(std::max<std::size_t>(batches, 1)), thread_([this] { run(); }) {}

Loader::Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_.notify_all();
  thread_.join();
}

void Loader::Prefetcher::answer(const Look& look) {
  std::vector<const std::vector<Span>*> pending;
  for (std::size_t i = 0; i < count_; ++i)
    for (const std::vector<Span>& row : ring_[(head_ + i) % ring_.size()].rows) pending.push_back(&row);
  for (const PackedRow& row : made_) pending.push_back(&row.spans);
  look(pending);
}

void Loader::Prefetcher::consistent(const Look& look) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_) {
    request_ = &look;
    requested_.store(true, std::memory_order_release);
    answered_.wait(lock, [this] { return request_ == nullptr || idle_; });
    if (request_ == nullptr) return;  // the producer answered between two rows
    request_ = nullptr;
    requested_.store(false, std::memory_order_relaxed);
  }
  answer(look);
}

void Loader::Prefetcher::run() {
  const auto rows_per_batch = static_cast<std::size_t>(impl_.batch_rows());
  // Between two rows the loader's state matches the rows made so far: the place to answer a request.
  auto serve = [this] {  // under mutex_
    if (request_ == nullptr) return;
    answer(*request_);
    request_ = nullptr;
    requested_.store(false, std::memory_order_relaxed);
    answered_.notify_all();
  };
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        serve();
        idle_ = producer_waiting_ = true;
        space_.wait(lock, [this] { return stop_ || count_ < ring_.size(); });
        idle_ = producer_waiting_ = false;
        if (stop_) break;
      }
      for (std::size_t r = 0; r < rows_per_batch && !stop_.load(std::memory_order_relaxed); ++r) {
        // made_ needs no lock: the consumer reads it only through answer(), i.e. here or while we are idle.
        made_.push_back(impl_.next_row());
        if (requested_.load(std::memory_order_acquire)) {
          std::lock_guard<std::mutex> lock(mutex_);
          serve();
        }
      }
      if (made_.size() < rows_per_batch) break;  // stopped
      PreparedBatch prepared;
      prepared.batch = impl_.assemble(made_, prepared.provenance);
      for (PackedRow& row : made_) prepared.rows.push_back(std::move(row.spans));
      std::unique_lock<std::mutex> lock(mutex_);
      ring_[(head_ + count_) % ring_.size()] = std::move(prepared);
      made_.clear();
      ++count_;
      const bool wake = consumer_waiting_ && count_ >= wake_consumer_at_;
      lock.unlock();
      if (wake) ready_.notify_one();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = idle_ = true;
  }
  ready_.notify_all();
  answered_.notify_all();
}

PreparedBatch Loader::Prefetcher::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  consumer_waiting_ = true;
  ready_.wait(lock, [this] { return count_ > 0 || finished_; });
  consumer_waiting_ = false;
  wake_consumer_at_ = std::max<std::size_t>(1, ring_.size() / 2);  // the first batch as soon as it is made
  if (count_ == 0) {
    LLMTRAIN_CHECK(error_ != nullptr, "data loader: the prefetch thread stopped");
    std::rethrow_exception(error_);
  }
  PreparedBatch batch = std::move(ring_[head_]);
  head_ = (head_ + 1) % ring_.size();
  --count_;
  const bool wake = producer_waiting_ && count_ <= ring_.size() / 2;
  lock.unlock();
  if (wake) space_.notify_one();
  return batch;
}

SavedState Loader::Prefetcher::save_consumed() {
  SavedState state;
  consistent([&](const std::vector<const std::vector<Span>*>& pending) {
    state = impl_.save();
    std::vector<std::vector<Span>> made;
    for (const std::vector<Span>* row : pending) made.push_back(*row);
    state.ready.insert(state.ready.begin(), made.begin(), made.end());
  });
  return state;
}

LoaderStats Loader::Prefetcher::stats() {
  LoaderStats stats;
  consistent([&](const std::vector<const std::vector<Span>*>& pending) {
    stats = impl_.stats();
    for (const std::vector<Span>* row : pending)  // rows still to hand out keep their epoch open
      for (const Span& span : *row) {
        std::uint32_t& epoch = stats.datasets[span.doc.dataset].epoch;
        epoch = std::min(epoch, span.doc.epoch);
      }
  });
  return stats;
}

}  // namespace llmtrain::data
