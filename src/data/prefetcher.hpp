// Background preparation of batches: one thread runs the loader's forward path (read, decompress, tokenize,
// pack, shuffle, assemble) ahead of the trainer, into a ring of whole batches.
//
// Why batches: handing over rows one by one cost a lock, a wake-up and a cache-cold copy per row, which on
// pre-tokenized data (a few microseconds per row) more than halved the tokens per CPU second. The producer now
// assembles each batch itself and the consumer takes it with one lock and a move. Neither side signals the
// other unless it waits, and then only past half the ring (a consumer ahead of the producer is woken once
// half the ring is ready, a producer ahead of the consumer once half is free), so that a wake-up, which costs
// about as much as making a batch of pre-tokenized rows, is paid once per half ring, not once per batch.
//
// "State = consumed" survives the prefetch without any per-row snapshot: the producer's own state, plus the
// rows it has made but the trainer has not taken (as spans), to be handed out first, resumes to exactly what
// an uninterrupted run hands out next. Taking both consistently never waits for a batch: when the producer is
// idle (the ring is full, the usual case behind a trainer) the consumer reads them at once; when it is busy,
// it answers between two rows. A producer error is kept and rethrown by pop() once the batches made before it
// are handed out; the destructor stops and joins the thread whatever state it is in.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "loader_impl.hpp"

namespace llmtrain::data {

// One batch as the producer made it: what next() returns, and the rows' spans for a state taken before it is
// handed out.
struct PreparedBatch {
  Batch batch;
  std::vector<RowProvenance> provenance;
  std::vector<std::vector<Span>> rows;
};

class Loader::Prefetcher {
 public:
  Prefetcher(Loader::Impl& impl, std::size_t batches);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  PreparedBatch pop();          // blocks until a batch is ready; rethrows the producer's error
  SavedState save_consumed();   // the state as of the batches popped so far
  LoaderStats stats();

 private:
  // Runs `look(rows made but not taken, oldest first)` while the loader's state is consistent with them.
  using Look = std::function<void(const std::vector<const std::vector<Span>*>&)>;
  void consistent(const Look& look);
  void answer(const Look& look);  // under mutex_, producer idle or between two rows
  void run();

  Loader::Impl& impl_;
  std::vector<PreparedBatch> ring_;
  std::size_t head_ = 0, count_ = 0;  // ring_[head_] is the oldest of count_ ready batches
  std::vector<PackedRow> made_;       // rows of the producer's batch in the making
  std::mutex mutex_;
  std::condition_variable ready_, space_, answered_;
  bool consumer_waiting_ = false, producer_waiting_ = false;
  std::size_t wake_consumer_at_ = 1;  // ready batches that wake a waiting consumer
  bool idle_ = false;                 // the producer waits for space or has finished: it touches nothing
  const Look* request_ = nullptr;     // a look the busy producer runs between two rows
  std::atomic<bool> requested_{false}, stop_{false};
  std::exception_ptr error_;
  bool finished_ = false;
  std::thread thread_;  // last: starts after everything above is constructed
};

}  // namespace llmtrain::data
