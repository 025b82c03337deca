// Background preparation of batches: one thread runs the loader's forward path (read, decompress, tokenize,
// pack, shuffle, assemble) ahead of the trainer, into a ring of slots that each hold one batch. The loader
// starts it, and stops it (finish_after_current, then the ring is handed out), as its rule decides
// (adaptive_prefetch.hpp).
//
// Why whole batches: handing over rows one by one cost a lock and a wake-up per row, which on pre-tokenized
// data (a few microseconds per row) more than halved the tokens per CPU second. Neither side signals the
// other unless it waits, and then only past half the ring (a consumer ahead of the producer is woken once
// half the ring is ready, a producer ahead of the consumer once half is free), so that a wake-up, which costs
// about a third of making a batch of pre-tokenized rows, is paid once per half ring, not once per batch.
//
// Why slots that keep their storage: when the producer assembled a new Batch per batch and the consumer took
// it by move, every batch's tokens, provenance strings and Progress were allocated in one thread and freed in
// the other (glibc then takes the producer's arena lock, trims its heap and the producer faults fresh pages
// in). Now each slot keeps a Batch, its provenance and its Progress. The producer assembles into the slot's
// storage (no allocation once it is large enough) and moves the Progress in, freeing the old one in its own
// thread. The consumer swaps the Batch and the provenance with the caller's (Loader::next_into), so what the
// caller held goes back to the ring to be overwritten, and replays the Progress by copying, never moving
// out of it. A slot is the consumer's from the moment it is ready until pop() releases it, and the producer
// writes only slots that are not ready, so neither holds the lock while it works on a slot. (Loader::next(),
// by value, hands the slot an empty Batch, which the producer must allocate again.)
//
// "State = consumed" without asking the producer: each batch carries its Progress (progress.hpp), and pop()
// replays it onto the consumer's copy of the state, taken when the producer started. So state() and stats()
// read what the trainer consumed, never wait, and give the same bytes as a synchronous loader after as many
// batches, however far the producer ran ahead. A producer error is kept and rethrown by pop() once the batches
// made before it are handed out; the destructor stops and joins the thread whatever state it is in.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loader_impl.hpp"

namespace llmtrain::data {

// One ring slot: a batch as the producer made it, and how it moved the loader's state.
struct PreparedBatch {
  Batch batch;
  std::vector<RowProvenance> provenance;
  Progress progress;
  double make_s = 0;  // how long the producer took to make it
};

class Loader::Prefetcher {
 public:
  Prefetcher(Loader::Impl& impl, std::size_t batches);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Blocks until a batch is ready; rethrows the producer's error. Swaps the batch and its provenance into
  // `batch` and `provenance` (their old storage goes to the producer), moves the consumed state on by it and
  // sets `make_s` to the time the producer took to make it. False, touching nothing, once the producer has
  // stopped after finish_after_current() and every batch it made was popped: the Impl's state is then the
  // consumed state, and the Impl is the caller's again.
  bool pop(Batch& batch, std::vector<RowProvenance>& provenance, double& make_s);
  // The producer finishes the batch it is making and makes no more (the loader is about to make batches in
  // the caller's thread). The batches made stay to be popped.
  void finish_after_current();
  // The state as of the batches popped so far (the consumer's thread only, like pop()).
  const SavedState& consumed() const { return consumed_; }
  LoaderStats stats() const { return stats_of(consumed_, tallies_, bad_by_file_); }

 private:
  void run();

  Loader::Impl& impl_;
  // The consumer's side: the loader's state as of the last batch popped.
  SavedState consumed_;
  Tallies tallies_;
  std::map<std::string, std::uint64_t> bad_by_file_;

  std::vector<PreparedBatch> ring_;
  std::size_t head_ = 0, count_ = 0;  // ring_[head_] is the oldest of count_ ready batches
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  bool consumer_waiting_ = false, producer_waiting_ = false;
  std::size_t wake_consumer_at_ = 1;  // ready batches that wake a waiting consumer
  std::atomic<bool> stop_{false};
  bool finishing_ = false;  // finish_after_current() was called
  std::exception_ptr error_;
  bool finished_ = false;
  std::thread thread_;  // last: starts after everything above is constructed
};

}  // namespace llmtrain::data
