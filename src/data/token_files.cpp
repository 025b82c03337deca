// Pre-tokenized files: .ltok and Megatron .bin/.idx, read with pread (see token_files.hpp).
#include "token_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "permutation.hpp"

namespace llmtrain::data {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'T', 'O', 'K', 'S', '\0'};
constexpr char kMegatronMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
constexpr std::uint64_t kMegatronHeaderBytes = 9 + 8 + 1 + 8 + 8;

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A read-only file descriptor, closed when it goes. Opened with O_NOATIME where the file's owner allows it
// (EPERM otherwise): on a relatime mount every read still asks whether the access time is due (about 2 % of the
// loader's time where shards hold one document each).
class Fd {
 public:
  explicit Fd(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME)) {
    if (fd_ < 0 && errno == EPERM) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    LLMTRAIN_CHECK(fd_ >= 0, path, ": cannot open: ", std::strerror(errno));
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  const std::string& path() const { return path_; }

  std::uint64_t size() const {
    struct stat st {};
    LLMTRAIN_CHECK(::fstat(fd_, &st) == 0, path_, ": cannot stat: ", std::strerror(errno));
    return static_cast<std::uint64_t>(st.st_size);
  }
  // Reads up to n bytes at byte `at` into p; fewer only where the file ends first. Returns how many were read.
  std::uint64_t read(std::uint64_t at, void* p, std::uint64_t n) const {
    auto* out = static_cast<unsigned char*>(p);
    std::uint64_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(at + done));
      if (r < 0 && errno == EINTR) continue;
      LLMTRAIN_CHECK(r >= 0, path_, ": cannot read ", n - done, " bytes at byte ", at + done, ": ", std::strerror(errno));
      if (r == 0) break;
      done += static_cast<std::uint64_t>(r);
    }
    return done;
  }

 private:
  std::string path_;
  int fd_;
};

// Appends n tokens of type T at p to `out` as little-endian int32 (a loop the compiler vectorises); false if
// one of them is not a valid id (negative, or above INT32_MAX). Converted through a buffer that stays in L1
// and appended: resizing `out` first would zero it only to overwrite it.
template <class T>
bool append_converted(const unsigned char* p, std::uint64_t n, std::string& out) {
  constexpr std::uint64_t kChunk = 1024;
  char buffer[4 * kChunk];
  bool valid = true;
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t k = std::min(kChunk, n - done);
    for (std::uint64_t t = 0; t < k; ++t) {
      const T v = load<T>(p + (done + t) * sizeof(T));
      valid &= v >= 0 && static_cast<std::int64_t>(v) <= std::numeric_limits<std::int32_t>::max();
      const std::int32_t id = static_cast<std::int32_t>(v);
      std::memcpy(buffer + 4 * t, &id, 4);
    }
    out.append(buffer, 4 * k);
    done += k;
  }
  return valid;
}

// An open token data file (.ltok, or the .bin of a Megatron pair) and its index, read once when it opens:
// where each document starts and how many tokens it has. The index is checked completely then (sizes add up,
// documents in increasing order and inside the file), so reading a block trusts it.
//
// Tokens are read with pread, not through a memory map: reading a map past the end of a file truncated in place
// raises SIGBUS, which only an fstat before each use could rule out (8 % of the loader's time where shards hold
// one document each: perf/RESULTS.md). A read that comes up short is how that truncation is noticed here, so a
// block costs one system call, and the copy out of the page cache is the kernel's.
class TokenFile {
 public:
  // Opens `file` and reads its index. Null, with what changed in `change`, if the file no longer has its listed
  // size: then it may be another file by now, and its index is not read.
  static std::unique_ptr<const TokenFile> open(const CorpusFile& file, std::string& change) {
    std::unique_ptr<TokenFile> f(new TokenFile(file.path));
    change = size_change(file, f->data_.size());
    if (!change.empty()) return nullptr;
    if (file.format != FileFormat::ltok) {
      f->read_megatron_index(file.size);
    } else if (std::uint64_t ended_at = 0; !f->read_ltok_index(file.size, ended_at)) {
      change = f->short_read_change(file, ended_at);
      return nullptr;
    }
    return f;
  }

  const std::string& path() const { return data_.path(); }
  std::uint64_t count() const { return count_; }
  std::uint64_t begin_byte(std::uint64_t i) const {
    return ltok_ ? kTokenFileHeaderBytes + offsets_[i] * dtype_bytes_ : static_cast<std::uint64_t>(pointers_[i]);
  }
  std::uint64_t end_byte(std::uint64_t i) const { return begin_byte(i) + tokens(i) * dtype_bytes_; }
  // First document starting at or after byte `at` (documents are in increasing byte order).
  std::uint64_t lower_bound(std::uint64_t at) const {
    std::uint64_t lo = 0, hi = count_;
    while (lo < hi) {
      std::uint64_t mid = lo + (hi - lo) / 2;
      if (begin_byte(mid) < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // Reads bytes [from, to) of the file into `out`. Empty if all were read, else the size change that explains
  // why not (the file ends early: truncated in place since it was opened).
  std::string read(const CorpusFile& file, std::uint64_t from, std::uint64_t to, unsigned char* out) const {
    const std::uint64_t got = data_.read(from, out, to - from);
    return got == to - from ? std::string() : short_read_change(file, from + got);
  }
  // True if the tokens are stored as little-endian int32, the layout the loader hands on: then they need no
  // conversion, only the check that each is a valid id (check_in_place).
  bool int32_tokens() const { return dtype_code_ == 4; }
  void check_in_place(std::uint64_t i, const unsigned char* p) const {
    const std::uint64_t n = tokens(i);
    std::uint32_t bits = 0;
    for (std::uint64_t t = 0; t < n; ++t) bits |= load<std::uint32_t>(p + 4 * t);
    LLMTRAIN_CHECK(bits >> 31 == 0, data_.path(), ": the document at byte ", begin_byte(i),
                   " holds a negative token id (corrupt file or wrong dtype)");
  }
  // Appends document i's tokens, whose bytes are at p, as little-endian int32.
  void append(std::uint64_t i, const unsigned char* p, std::string& out) const {
    const std::uint64_t n = tokens(i);
    out.reserve(out.size() + 4 * n);
    bool valid = true;
    switch (dtype_code_) {
      case 1: valid = append_converted<std::uint8_t>(p, n, out); break;
      case 3: valid = append_converted<std::int16_t>(p, n, out); break;
      case 4: valid = append_converted<std::int32_t>(p, n, out); break;
      case 5: valid = append_converted<std::int64_t>(p, n, out); break;
      default: valid = append_converted<std::uint16_t>(p, n, out); break;  // 8 (uint16), and .ltok's 2-byte tokens
    }
    LLMTRAIN_CHECK(valid, data_.path(), ": the document at byte ", begin_byte(i),
                   " holds a negative or too large token id (corrupt file or wrong dtype)");
  }
  // .ltok header fields, for verify_token_file.
  std::uint64_t fingerprint() const { return load<std::uint64_t>(header_ + 40); }
  std::uint64_t checksum() const { return load<std::uint64_t>(header_ + 48); }

 private:
  explicit TokenFile(const std::string& path) : data_(path) {}

  std::uint64_t tokens(std::uint64_t i) const {
    return ltok_ ? offsets_[i + 1] - offsets_[i] : static_cast<std::uint64_t>(sizes_[i]);
  }

  // The file ended at byte `eof_at` before a read was done: its size changed in place. Reported with its size
  // now, or with where it ended if it has its planned size again (rewritten in the meantime).
  std::string short_read_change(const CorpusFile& file, std::uint64_t eof_at) const {
    const std::uint64_t now = data_.size();
    return size_change(file, now != file.size ? now : eof_at);
  }

  // False, with where it ended in `ended_at`, if the file ended before its index did.
  bool read_ltok_index(std::uint64_t size, std::uint64_t& ended_at) {
    auto read_whole = [&](std::uint64_t at, void* p, std::uint64_t n) {
      const std::uint64_t got = data_.read(at, p, n);
      ended_at = at + got;
      return got == n;
    };
    ltok_ = true;
    const std::string& path = data_.path();
    const unsigned char* h = header_;
    LLMTRAIN_CHECK(size >= kTokenFileHeaderBytes, path, ": not an llmtrain token file (shorter than its header)");
    if (!read_whole(0, header_, kTokenFileHeaderBytes)) return false;
    LLMTRAIN_CHECK(std::memcmp(h, kMagic, 8) == 0, path, ": not an llmtrain token file (bad magic)");
    std::uint32_t version = load<std::uint32_t>(h + 8);
    LLMTRAIN_CHECK(version == 1, path, ": token file version ", version, " is not supported (expected 1)");
    LLMTRAIN_CHECK(load<std::uint64_t>(h + 56) == hash_bytes(reinterpret_cast<const char*>(h), 56), path,
                   ": corrupt token file header (header hash mismatch)");
    dtype_bytes_ = load<std::uint32_t>(h + 12);
    LLMTRAIN_CHECK(dtype_bytes_ == 2 || dtype_bytes_ == 4, path, ": token size ", dtype_bytes_, " is not 2 or 4");
    dtype_code_ = dtype_bytes_ == 2 ? 8 : 4;
    count_ = load<std::uint64_t>(h + 24);
    const std::uint64_t tokens = load<std::uint64_t>(h + 32);
    const std::uint64_t room = size - kTokenFileHeaderBytes;
    LLMTRAIN_CHECK(tokens <= room / dtype_bytes_ && count_ < (room - tokens * dtype_bytes_) / 8 &&
                       kTokenFileHeaderBytes + tokens * dtype_bytes_ + (count_ + 1) * 8 == size,
                   path, ": truncated or corrupt token file: ", size, " bytes for ", count_, " documents of ", tokens,
                   " tokens in total");
    offsets_.resize(count_ + 1);
    if (!read_whole(kTokenFileHeaderBytes + tokens * dtype_bytes_, offsets_.data(), 8 * (count_ + 1))) return false;
    for (std::uint64_t i = 0; i < count_; ++i)
      LLMTRAIN_CHECK(offsets_[i] <= offsets_[i + 1], path, ": document ", i, " has token offsets [", offsets_[i],
                     ", ", offsets_[i + 1], "), which run backwards: corrupt token file");
    LLMTRAIN_CHECK(offsets_[count_] == tokens, path, ": the documents end at token ", offsets_[count_],
                   ", not at the file's ", tokens, " tokens: corrupt token file");
    return true;
  }

  // The .idx next to the .bin, read whole now: sizes and pointers (doc_idx is not used). Not in the listing, so
  // damage to it, or its change while it is read, is an error naming it.
  void read_megatron_index(std::uint64_t bin_size) {
    const std::string& bin = data_.path();
    const std::string path = bin.substr(0, bin.size() - 4) + ".idx";
    const Fd index(path);
    const std::uint64_t size = index.size();
    unsigned char h[kMegatronHeaderBytes];
    LLMTRAIN_CHECK(size >= kMegatronHeaderBytes && index.read(0, h, sizeof h) == sizeof h &&
                       std::memcmp(h, kMegatronMagic, 9) == 0,
                   path, ": not a Megatron index (bad magic \"MMIDIDX\" or shorter than its header)");
    std::uint64_t version = load<std::uint64_t>(h + 9);
    LLMTRAIN_CHECK(version == 1, path, ": Megatron index version ", version, " is not supported (expected 1)");
    dtype_code_ = h[17];
    switch (dtype_code_) {
      case 1: dtype_bytes_ = 1; break;
      case 3: case 8: dtype_bytes_ = 2; break;
      case 4: dtype_bytes_ = 4; break;
      case 5: dtype_bytes_ = 8; break;
      default: LLMTRAIN_FAIL(path, ": token dtype code ", int(dtype_code_),
                             " is not an integer type (1 uint8, 3 int16, 4 int32, 5 int64, 8 uint16)");
    }
    count_ = load<std::uint64_t>(h + 18);
    const std::uint64_t docs = load<std::uint64_t>(h + 26);
    const std::uint64_t room = size - kMegatronHeaderBytes;
    LLMTRAIN_CHECK(count_ <= room / 12 && docs <= (room - 12 * count_) / 8 &&
                       kMegatronHeaderBytes + 12 * count_ + 8 * docs == size,
                   path, ": truncated or corrupt Megatron index: ", size, " bytes for ", count_, " sequences and ",
                   docs, " document indices");
    sizes_.resize(count_);
    pointers_.resize(count_);
    LLMTRAIN_CHECK(index.read(kMegatronHeaderBytes, sizes_.data(), 4 * count_) == 4 * count_ &&
                       index.read(kMegatronHeaderBytes + 4 * count_, pointers_.data(), 8 * count_) == 8 * count_,
                   path, ": shorter than when it was opened (changed while it was read)");
    for (std::uint64_t i = 0; i < count_; ++i) {
      const std::int64_t at = pointers_[i];
      const bool inside = at >= 0 && sizes_[i] >= 0 && static_cast<std::uint64_t>(at) <= bin_size &&
                          static_cast<std::uint64_t>(sizes_[i]) <= (bin_size - at) / dtype_bytes_;
      LLMTRAIN_CHECK(inside, path, ": sequence ", i, " (", sizes_[i], " tokens at byte ", at, ") lies outside ", bin,
                     " (", bin_size, " bytes): corrupt or mismatched .idx/.bin pair");
      LLMTRAIN_CHECK(i == 0 || at >= pointers_[i - 1], path, ": sequence ", i, " starts at byte ", at,
                     ", before the previous one (", pointers_[i - 1], "): corrupt index");
    }
  }

  Fd data_;
  bool ltok_ = false;
  unsigned char header_[kTokenFileHeaderBytes] = {};   // .ltok
  std::vector<std::uint64_t> offsets_;                 // .ltok: count + 1 token offsets
  std::vector<std::int32_t> sizes_;                    // Megatron: tokens per sequence
  std::vector<std::int64_t> pointers_;                 // Megatron: byte offset of each sequence in the .bin
  std::uint32_t dtype_bytes_ = 2;
  unsigned dtype_code_ = 8;  // Megatron's codes; .ltok maps onto 8 (uint16) and 4 (int32, ids < 2^31)
  std::uint64_t count_ = 0;
};

// What tells a file replaced by another: inode, size and modification time.
struct FileIdentity {
  std::uint64_t inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const { return inode == o.inode && size == o.size && mtime_ns == o.mtime_ns; }
};

// The token files this thread read last, open with their indices: a shard's blocks and every epoch reopen the
// same files, and opening one reads its whole index. Keyed by path and the file's identity in the listing, so
// a file replaced since is opened afresh by the next listing; a hit costs no system call. A file replaced by
// rename during the run is then read as it was listed (the open descriptor keeps it), and a resume reports
// the replacement. Null, with what changed in `change`, if the file no longer has its listed size. The file
// stays valid until this thread's next call.
const TokenFile* open_token_file(const CorpusFile& file, std::string& change) {
  struct Entry {
    FileIdentity identity;
    std::unique_ptr<const TokenFile> file;
  };
  thread_local std::vector<Entry> recent;  // most recent last
  const FileIdentity identity{file.inode, file.size, file.mtime_ns};
  for (std::size_t i = recent.size(); i-- > 0;) {
    if (!(recent[i].identity == identity) || recent[i].file->path() != file.path) continue;
    std::rotate(recent.begin() + static_cast<std::ptrdiff_t>(i), recent.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                recent.end());
    return recent.back().file.get();
  }
  std::unique_ptr<const TokenFile> opened = TokenFile::open(file, change);
  if (!opened) return nullptr;
  if (recent.size() == 16) recent.erase(recent.begin());
  recent.push_back({identity, std::move(opened)});
  return recent.back().file.get();
}

// A thread's buffer for token bytes that need converting: it grows to the largest read and stays.
unsigned char* conversion_buffer(std::uint64_t bytes) {
  thread_local std::vector<unsigned char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace

LoadedBlock read_token_block(const CorpusFile& file, const ShardBlock& range, LoadedBlock block) {
  block.reset();
  const TokenFile* docs = open_token_file(file, block.error);
  if (!docs) {
    block.size_changed = true;
    return block;
  }
  const std::uint64_t first = docs->lower_bound(range.begin), last = docs->lower_bound(range.end);
  if (first == last) return block;
  // The block's documents are one byte range of the file (back to back in an .ltok; a Megatron .bin may leave
  // gaps or overlap, which the range spans): one read. int32 tokens are read straight into the block's
  // storage and its records point into that; others into a buffer, converted and appended.
  const std::uint64_t from = docs->begin_byte(first);
  std::uint64_t to = from;
  for (std::uint64_t i = first; i < last; ++i) to = std::max(to, docs->end_byte(i));
  const bool in_place = docs->int32_tokens();
  if (in_place) block.data.resize(to - from);
  unsigned char* bytes = in_place ? reinterpret_cast<unsigned char*>(block.data.data()) : conversion_buffer(to - from);
  block.error = docs->read(file, from, to, bytes);
  if (!block.error.empty()) {
    block.data.clear();
    block.size_changed = true;
    return block;
  }
  for (std::uint64_t i = first; i < last; ++i) {
    const std::uint64_t at = docs->begin_byte(i), end = docs->end_byte(i);
    // A document without tokens shares its key (byte offset) with the next one: like a blank line of JSON
    // Lines, it is not a record, so each key names one document.
    if (end == at) continue;
    if (in_place) {
      docs->check_in_place(i, bytes + (at - from));
      block.records.push_back({at - from, end - from, at});
    } else {
      const std::uint64_t begin = block.data.size();
      docs->append(i, bytes + (at - from), block.data);
      block.records.push_back({begin, block.data.size(), at});
    }
  }
  return block;
}

std::string read_token_record(const CorpusFile& file, std::uint64_t byte_offset) {
  std::string change;
  const TokenFile* docs = open_token_file(file, change);
  LLMTRAIN_CHECK(docs, file.path, ": ", change, "; ", size_change_consequence());
  // Documents without tokens starting at the same byte come first: the record is the one with tokens.
  std::uint64_t i = docs->lower_bound(byte_offset);
  while (i < docs->count() && docs->begin_byte(i) == byte_offset && docs->end_byte(i) == byte_offset) ++i;
  LLMTRAIN_CHECK(i < docs->count() && docs->begin_byte(i) == byte_offset, file.path, ": no document starts at byte ",
                 byte_offset);
  unsigned char* bytes = conversion_buffer(docs->end_byte(i) - byte_offset);
  change = docs->read(file, byte_offset, docs->end_byte(i), bytes);
  LLMTRAIN_CHECK(change.empty(), file.path, ": ", change, "; ", size_change_consequence());
  std::string out;
  docs->append(i, bytes, out);
  return out;
}

TokenFileWriter::TokenFileWriter(std::string path, std::uint64_t vocab_size, std::uint64_t tokenizer_fingerprint)
    : path_(std::move(path)),
      tmp_(path_ + ".tmp"),
      vocab_size_(vocab_size),
      fingerprint_(tokenizer_fingerprint),
      dtype_bytes_(vocab_size <= 65536 ? 2 : 4),
      checksum_(kFnv1aStart) {
  out_ = std::fopen(tmp_.c_str(), "wb");
  LLMTRAIN_CHECK(out_ != nullptr, tmp_, ": cannot create: ", std::strerror(errno));
  std::vector<unsigned char> header(kTokenFileHeaderBytes, 0);  // rewritten by finish()
  write(header.data(), header.size());
}

TokenFileWriter::~TokenFileWriter() {
  if (out_) {
    std::fclose(out_);
    std::remove(tmp_.c_str());
  }
}

void TokenFileWriter::write(const void* data, std::size_t n) {
  LLMTRAIN_CHECK(std::fwrite(data, 1, n, out_) == n, tmp_, ": write failed: ", std::strerror(errno));
}

void TokenFileWriter::add(const std::vector<TokenId>& tokens) {
  buffer_.resize(tokens.size() * dtype_bytes_);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    LLMTRAIN_CHECK(tokens[t] >= 0 && static_cast<std::uint64_t>(tokens[t]) < vocab_size_, path_, ": token id ",
                   tokens[t], " is outside the vocabulary of ", vocab_size_);
    if (dtype_bytes_ == 2) {
      std::uint16_t v = static_cast<std::uint16_t>(tokens[t]);
      std::memcpy(buffer_.data() + 2 * t, &v, 2);
    } else {
      std::memcpy(buffer_.data() + 4 * t, &tokens[t], 4);
    }
  }
  write(buffer_.data(), buffer_.size());
  checksum_ = fnv1a(checksum_, buffer_.data(), buffer_.size());
  offsets_.push_back(offsets_.back() + tokens.size());
}

void TokenFileWriter::finish() {
  const auto* offsets = reinterpret_cast<const unsigned char*>(offsets_.data());
  write(offsets, offsets_.size() * 8);
  checksum_ = fnv1a(checksum_, offsets, offsets_.size() * 8);
  unsigned char h[kTokenFileHeaderBytes] = {};
  std::memcpy(h, kMagic, 8);
  const std::uint32_t version = 1;
  std::memcpy(h + 8, &version, 4);
  std::memcpy(h + 12, &dtype_bytes_, 4);
  const std::uint64_t fields[] = {vocab_size_, offsets_.size() - 1, offsets_.back(), fingerprint_, checksum_};
  std::memcpy(h + 16, fields, sizeof fields);
  const std::uint64_t header_hash = hash_bytes(reinterpret_cast<const char*>(h), 56);
  std::memcpy(h + 56, &header_hash, 8);
  LLMTRAIN_CHECK(std::fseek(out_, 0, SEEK_SET) == 0, tmp_, ": seek failed");
  write(h, sizeof h);
  const bool closed = std::fclose(out_) == 0;
  out_ = nullptr;
  LLMTRAIN_CHECK(closed, tmp_, ": close failed: ", std::strerror(errno));
  LLMTRAIN_CHECK(std::rename(tmp_.c_str(), path_.c_str()) == 0, path_, ": cannot rename from ", tmp_, ": ",
                 std::strerror(errno));
}

bool verify_token_file(const std::string& path, std::uint64_t tokenizer_fingerprint, std::string& why) {
  try {
    CorpusFile file;
    file.path = path;
    file.format = FileFormat::ltok;
    file.size = Fd(path).size();
    std::string change;
    const std::unique_ptr<const TokenFile> docs = TokenFile::open(file, change);  // header, sizes, offsets
    if (!docs) {
      why = change;
      return false;
    }
    if (docs->fingerprint() != tokenizer_fingerprint) {
      why = "written with another tokenizer";
      return false;
    }
    // The token ids are not checked one by one: the checksum says the file is the one the writer wrote, and
    // the writer checked them against the vocabulary.
    std::vector<unsigned char> chunk(std::uint64_t{1} << 20);
    std::uint64_t sum = kFnv1aStart;
    for (std::uint64_t at = kTokenFileHeaderBytes; at < file.size;) {
      const std::uint64_t to = std::min(file.size, at + chunk.size());
      change = docs->read(file, at, to, chunk.data());
      if (!change.empty()) {
        why = change;
        return false;
      }
      sum = fnv1a(sum, chunk.data(), to - at);
      at = to;
    }
    if (sum != docs->checksum()) {
      why = "checksum mismatch";
      return false;
    }
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

}  // namespace llmtrain::data
