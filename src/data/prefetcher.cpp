// Background batch preparation (see prefetcher.hpp).
#include "prefetcher.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"

namespace llmtrain::data {

Loader::Prefetcher::Prefetcher(Loader::Impl& impl, std::size_t batches)
    : impl_(impl),
      consumed_(impl.save()),  // before the producer starts: the state as of the batches handed out so far
      tallies_(impl.tallies()),
      bad_by_file_(impl.bad_by_file()),
      ring_(std::max<std::size_t>(batches, 1)),
      thread_([this] { run(); }) {}

Loader::Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_.notify_all();
  thread_.join();
}

void Loader::Prefetcher::run() {
  const auto rows_per_batch = static_cast<std::size_t>(impl_.batch_rows());
  std::vector<PackedRow> made;
  try {
    impl_.record_progress();
    for (;;) {
      PreparedBatch* slot = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        producer_waiting_ = true;
        space_.wait(lock, [this] { return stop_ || finishing_ || count_ < ring_.size(); });
        producer_waiting_ = false;
        if (stop_ || finishing_) break;
        slot = &ring_[(head_ + count_) % ring_.size()];  // not ready: the consumer does not read it
      }
      const Stopwatch making;
      for (std::size_t r = 0; r < rows_per_batch && !stop_.load(std::memory_order_relaxed); ++r)
        made.push_back(impl_.next_row());
      if (made.size() < rows_per_batch) break;  // stopped
      impl_.assemble(made, slot->batch, slot->provenance);
      impl_.recycle(made);
      slot->progress = impl_.take_progress();  // frees the slot's old Progress here, where it was allocated
      slot->make_s = making.seconds();
      std::unique_lock<std::mutex> lock(mutex_);
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
    finished_ = true;
  }
  ready_.notify_all();
}

bool Loader::Prefetcher::pop(Batch& batch, std::vector<RowProvenance>& provenance, double& make_s) {
  PreparedBatch* slot = nullptr;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    consumer_waiting_ = true;
    ready_.wait(lock, [this] { return count_ > 0 || finished_; });
    consumer_waiting_ = false;
    wake_consumer_at_ = std::max<std::size_t>(1, ring_.size() / 2);  // the first batch as soon as it is made
    if (count_ == 0) {
      if (error_) std::rethrow_exception(error_);
      LLMTRAIN_CHECK(finishing_, "data loader: the prefetch thread stopped");
      return false;
    }
    slot = &ring_[head_];  // ready: ours until released below
  }
  apply(slot->progress, consumed_, tallies_, bad_by_file_);  // copies: the Progress stays the producer's
  std::swap(batch, slot->batch);
  std::swap(provenance, slot->provenance);
  make_s = slot->make_s;
  std::unique_lock<std::mutex> lock(mutex_);
  head_ = (head_ + 1) % ring_.size();
  --count_;
  const bool wake = producer_waiting_ && count_ <= ring_.size() / 2;
  lock.unlock();
  if (wake) space_.notify_one();
  return true;
}

void Loader::Prefetcher::finish_after_current() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
  }
  space_.notify_all();
}

}  // namespace llmtrain::data
