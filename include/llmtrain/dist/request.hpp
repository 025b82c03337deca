// Request: the handle of one asynchronous collective. The caller issues, overlaps compute, then test()s or
// wait()s; only after completion may it read the result or reuse the buffers. A backend implements
// Request::Pending (MPI requests, a CUDA event); the handle itself is header-only so that areas holding
// requests need no link to the dist library.
#pragma once

#include <exception>
#include <memory>
#include <utility>

namespace llmtrain::dist {

class Request {
 public:
  // One operation in flight, as a backend tracks it.
  class Pending {
   public:
    virtual ~Pending() = default;
    virtual bool test() = 0;  // makes progress; true once complete
    virtual void wait() = 0;  // blocks until complete
  };

  Request() = default;  // already complete
  explicit Request(std::unique_ptr<Pending> pending) : pending_(std::move(pending)) {}
  Request(Request&&) noexcept = default;
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      finish();
      pending_ = std::move(other.pending_);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { finish(); }

  // Makes progress; true once complete (then the buffers may be read and reused).
  bool test() {
    if (pending_ && pending_->test()) pending_.reset();
    return !pending_;
  }
  // Blocks until complete.
  void wait() {
    if (!pending_) return;
    pending_->wait();
    pending_.reset();
  }

 private:
  // Destroying an incomplete request waits for it: the backend may still write into the buffers. Not while
  // an exception unwinds the stack, though: if this rank failed alone, the others never join the
  // collective and waiting would hang the job instead of letting the error path end it (spmd_main.hpp).
  // A wait that fails here ends the process: a destructor has no one to report to.
  void finish() noexcept {
    if (!pending_) return;
    if (std::uncaught_exceptions() == 0) pending_->wait();
    pending_.reset();
  }

  std::unique_ptr<Pending> pending_;
};

}  // namespace llmtrain::dist
