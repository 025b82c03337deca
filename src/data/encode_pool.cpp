// Parallel tokenization in stream order (see encode_pool.hpp).
#include "encode_pool.hpp"

namespace llmtrain::data {

EncodePool::EncodePool(int threads, Frame frame) : frame_(std::move(frame)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

EncodePool::~EncodePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void EncodePool::run() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::vector<TokenId> framed;
    std::exception_ptr error;
    try {
      frame_(job->format, job->text, framed);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job->framed = std::move(framed);
      job->error = error;
      job->done = true;
      job->text = std::string();  // release the text early: only the tokens are needed now
    }
    done_.notify_all();
  }
}

std::shared_ptr<EncodePool::Job> EncodePool::submit(FileFormat format, std::string_view text) {
  auto job = std::make_shared<Job>();
  job->format = format;
  if (is_token_format(format)) {  // nothing to tokenize: a copy, cheaper here than a hand-over to a worker
    frame_(format, text, job->framed);
    job->done = true;
    return job;
  }
  job->text = std::string(text);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(job);
  }
  work_.notify_one();
  return job;
}

std::vector<TokenId> EncodePool::take(Job& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return job.done; });
  if (job.error) std::rethrow_exception(job.error);
  return std::move(job.framed);
}

void Lookahead::fill(EncodePool& pool, TextExtractor& extractor, const BadRecordPolicyState& bad) {
  while (!ended_ && entries_.size() < depth_) {
    Entry e;
    e.before = stream_.position();
    try {
      auto drawn = stream_.next(extractor, bad);
      if (drawn) {
        e.ref = drawn->ref;
        e.job = pool.submit(drawn->format, drawn->text);
      } else {
        ended_ = true;
      }
    } catch (...) {
      e.error = std::current_exception();
      ended_ = true;
    }
    entries_.push_back(std::move(e));
  }
}

bool Lookahead::take(EncodePool& pool, DocRef& doc, std::vector<TokenId>& framed) {
  Entry& e = entries_.front();
  if (e.error) std::rethrow_exception(e.error);  // the entry stays: the loader is unusable after an error
  if (!e.ref) {  // the stream's end: from now on its own position is the consumed one (ended_: no read ahead)
    entries_.pop_front();
    return false;
  }
  framed = pool.take(*e.job);
  doc = *e.ref;
  entries_.pop_front();
  return true;
}

}  // namespace llmtrain::data
