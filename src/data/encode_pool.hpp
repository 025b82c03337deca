// Tokenization in several threads without changing the output.
//
// Mixing picks a dataset by the token counts of the documents drawn before, so the loader cannot know which
// dataset's document comes after the one being tokenized. But each dataset's own stream of documents is fixed
// (ShardStream depends only on its cursors), whatever the mixing does. So every dataset keeps a Lookahead: its
// next few documents, read in stream order by the loader's thread and tokenized by the EncodePool's workers.
// When mixing picks the dataset, it takes the front document, waiting for its tokens if needed; the sequence
// of (document, tokens) is exactly the sequential one, so batches are bitwise identical for 1 and N threads.
//
// The state stays "consumed": each pending document remembers the stream's position before it was read, and
// the loader saves that position instead of the stream's (which ran ahead). Errors keep their place too: a
// read error or an encoder error is stored with its document and rethrown when that document is taken.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "shard_stream.hpp"

namespace llmtrain::data {

class EncodePool {
 public:
  // Framed tokens of a document's text (BOS, encoding, EOS); called from every worker at once.
  using Frame = std::function<void(FileFormat format, std::string_view text, std::vector<TokenId>& framed)>;
  struct Job {
    FileFormat format;
    std::string text;
    std::vector<TokenId> framed;
    std::exception_ptr error;
    bool done = false;
  };

  EncodePool(int threads, Frame frame);
  ~EncodePool();  // stops and joins every worker; jobs not started are dropped
  EncodePool(const EncodePool&) = delete;
  EncodePool& operator=(const EncodePool&) = delete;

  // Queues the text for a worker (pre-tokenized documents are framed at once, in the caller's thread).
  std::shared_ptr<Job> submit(FileFormat format, std::string_view text);
  // Waits for the job; returns its tokens or rethrows the encoder's error with its original message.
  std::vector<TokenId> take(Job& job);

 private:
  void run();

  Frame frame_;
  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: start after everything above is constructed
};

class Lookahead {
 public:
  Lookahead(ShardStream& stream, std::size_t depth) : stream_(stream), depth_(depth) {}

  // Reads documents from the stream until `depth` are pending (or the stream ended or failed).
  void fill(EncodePool& pool, TextExtractor& extractor, const BadRecordPolicyState& bad);
  // The document ShardStream::next would have given, with its framed tokens; false where it gave nullopt.
  // Rethrows the error of reading or encoding that document.
  bool take(EncodePool& pool, DocRef& doc, std::vector<TokenId>& framed);
  // The stream's position as of the documents taken so far.
  StreamPosition position() const { return entries_.empty() ? stream_.position() : entries_.front().before; }

 private:
  struct Entry {
    StreamPosition before;        // the stream's position before this document was read
    std::optional<DocRef> ref;    // nullopt: the stream had no document (or `error` is set)
    std::exception_ptr error;     // reading failed here
    std::shared_ptr<EncodePool::Job> job;
  };
  ShardStream& stream_;
  std::size_t depth_;
  std::deque<Entry> entries_;
  bool ended_ = false;  // the last entry is an end or an error: read no further
};

}  // namespace llmtrain::data
