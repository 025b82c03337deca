// The memory of a backend (backend.hpp) and the buffers the model keeps in it.
//
// A backend's memory is host memory (the host backend) or device memory (the CUDA backend: plain
// cudaMalloc, never managed memory); the model never reads it directly, only through the backend's
// operations and the two copies below, which are the one place data crosses between host and backend.
// Every allocation goes through Memory::allocate, which counts the bytes held and their peak, so each
// backend is its own tracking allocator; both also report to the process's tracker (mem.peak_bytes).
// Buffer<U> owns one allocation: the model's activations, scratch, token ids and tables are Buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "llmtrain/core/error.hpp"

namespace llmtrain::model {

class Memory {
 public:
  virtual ~Memory() = default;

  // `bytes` of zeroed memory; `label` names it in the tracker and in errors.
  void* allocate(std::int64_t bytes, const char* label) {
    void* data = bytes > 0 ? allocate_zeroed(bytes, label) : nullptr;
    allocated_ += bytes;
    peak_ = std::max(peak_, allocated_);
    return data;
  }
  // Frees what allocate returned for `bytes` (null: nothing).
  void free(void* data, std::int64_t bytes) noexcept {
    if (data) release(data, bytes);
    allocated_ -= bytes;
  }
  // Bytes allocated and not yet freed, and the most there were at once.
  std::int64_t allocated_bytes() const { return allocated_; }
  std::int64_t peak_bytes() const { return peak_; }
  // The peak since the last call (or since the memory was made), then counts a new one from what is held now:
  // a training step's peak.
  std::int64_t take_peak_bytes() {
    const std::int64_t peak = peak_;
    peak_ = allocated_;
    return peak;
  }

  // Host memory -> this memory: `host` may be reused once the call returns; the copy is ordered before the
  // backend's later operations.
  virtual void copy_from_host(void* dst, const void* host, std::int64_t bytes) = 0;
  // This memory -> host memory, after the operations queued before it; returns with the data on the host.
  virtual void copy_to_host(void* host, const void* src, std::int64_t bytes) = 0;

 private:
  virtual void* allocate_zeroed(std::int64_t bytes, const char* label) = 0;
  virtual void release(void* data, std::int64_t bytes) noexcept = 0;

  std::int64_t allocated_ = 0, peak_ = 0;
};

// `size` elements of U in a backend's memory, freed with the Buffer. Move-only.
template <typename U>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Memory& memory, std::int64_t size, const char* label)
      : memory_(&memory), data_(static_cast<U*>(memory.allocate(bytes_of(size), label))), size_(size) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer(std::move(other)).swap(*this);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  U* data() const { return data_; }
  std::int64_t size() const { return size_; }

  // The whole buffer from / to host memory (Memory's copies).
  void copy_from_host(const std::vector<U>& host) {
    LLMTRAIN_CHECK(std::int64_t(host.size()) == size_, "copy of ", host.size(), " host elements into a buffer of ",
                   size_);
    if (size_ > 0) memory_->copy_from_host(data_, host.data(), bytes_of(size_));
  }
  std::vector<U> to_host() const {
    std::vector<U> host(static_cast<std::size_t>(size_));
    if (size_ > 0) memory_->copy_to_host(host.data(), data_, bytes_of(size_));
    return host;
  }

 private:
  static std::int64_t bytes_of(std::int64_t size) { return size * std::int64_t(sizeof(U)); }
  void reset() noexcept {
    if (memory_) memory_->free(data_, bytes_of(size_));
    memory_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }
  void swap(Buffer& other) noexcept {
    std::swap(memory_, other.memory_);
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  Memory* memory_ = nullptr;
  U* data_ = nullptr;
  std::int64_t size_ = 0;
};

}  // namespace llmtrain::model
