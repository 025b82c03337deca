// Pre-tokenized files: .ltok and Megatron .bin/.idx, memory-mapped (see token_files.hpp).
#include "token_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <memory>
#include <utility>

#include "llmtrain/core/error.hpp"
#include "permutation.hpp"

namespace llmtrain::data {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'T', 'O', 'K', 'S', '\0'};
constexpr char kMegatronMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
constexpr std::uint64_t kMegatronHeaderBytes = 9 + 8 + 1 + 8 + 8;

// FNV-1a 64, streaming: the checksum of an .ltok file's tokens and offsets.
std::uint64_t fnv(std::uint64_t h, const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}
constexpr std::uint64_t kFnvStart = 0xcbf29ce484222325ULL;

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A read-only memory map of a whole file. The file stays open, so that a later use can ask, without looking the
// path up again, whether it still has the size it was mapped with.
class Mapped {
 public:
  explicit Mapped(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    LLMTRAIN_CHECK(fd_ >= 0, path, ": cannot open: ", std::strerror(errno));
    if (!current_size(size_)) {
      const int err = errno;
      ::close(fd_);
      LLMTRAIN_FAIL(path, ": cannot stat: ", std::strerror(err));
    }
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd_);
        LLMTRAIN_FAIL(path, ": cannot map: ", std::strerror(err));
      }
      data_ = static_cast<const unsigned char*>(p);
    }
  }
  ~Mapped() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
    ::close(fd_);
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  const unsigned char* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // False if the file was truncated or extended in place since it was mapped (reading the map past a new end
  // would raise SIGBUS). One fstat of the open file: no path walk.
  bool same_size() const {
    std::uint64_t now = 0;
    return current_size(now) && now == size_;
  }

 private:
  bool current_size(std::uint64_t& bytes) const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return false;
    bytes = static_cast<std::uint64_t>(st.st_size);
    return true;
  }

  std::string path_;
  int fd_;
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
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

// What tells a file replaced by another: inode, size and modification time.
struct FileIdentity {
  std::uint64_t inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const { return inode == o.inode && size == o.size && mtime_ns == o.mtime_ns; }
};

FileIdentity listed_identity(const CorpusFile& file) { return {file.inode, file.size, file.mtime_ns}; }

// The maps of the files this thread read last: a shard's blocks and every epoch reopen the same files, and
// mapping a file costs system time (map, page faults, unmap) far above reading the few blocks a shard takes
// from it. Keyed by path and identity, so a file replaced since is mapped afresh. A listed file's identity is
// the listing's, so a hit costs one fstat of the open file instead of a stat by path (which took 22 % of
// the loader's time where shards hold one document each: perf/RESULTS.md); a file replaced by rename during
// the run is then read as it was listed, and a resume reports the replacement. A file whose size changed in
// place is mapped again at its new size (reading the old map past a new end raises SIGBUS), which the caller
// compares with the planned one.
std::shared_ptr<const Mapped> map_file(const std::string& path, const FileIdentity& identity) {
  struct Entry {
    FileIdentity identity;
    std::shared_ptr<const Mapped> map;
  };
  thread_local std::vector<Entry> recent;  // most recent last
  for (std::size_t i = recent.size(); i-- > 0;) {
    if (!(recent[i].identity == identity) || recent[i].map->path() != path) continue;
    Entry hit = std::move(recent[i]);
    recent.erase(recent.begin() + static_cast<std::ptrdiff_t>(i));
    if (!hit.map->same_size()) break;
    recent.push_back(std::move(hit));
    return recent.back().map;
  }
  auto map = std::make_shared<const Mapped>(path);
  recent.push_back({identity, map});
  if (recent.size() > 16) recent.erase(recent.begin());
  return map;
}

// A file that is not in the listing (a Megatron .idx): its identity from a stat by path.
std::shared_ptr<const Mapped> map_unlisted_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::make_shared<const Mapped>(path);  // throws, naming the file
  return map_file(path, {static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
                         static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
}

// The documents of one token data file, from its index: where each starts (byte offset in the data file),
// how many tokens it has, and its tokens as int32. Validates the index as it is used.
class TokenDocs {
 public:
  TokenDocs(const CorpusFile& file, std::shared_ptr<const Mapped> map) : map_(std::move(map)), data_(*map_) {
    if (file.format == FileFormat::ltok) open_ltok();
    else open_megatron();
  }

  std::uint64_t count() const { return count_; }
  std::uint64_t begin_byte(std::uint64_t i) const {
    return ltok_ ? kTokenFileHeaderBytes + offset(i) * dtype_bytes_ : static_cast<std::uint64_t>(pointer(i));
  }
  // Appends document i's tokens as little-endian int32 bytes.
  void append(std::uint64_t i, std::string& out) const {
    std::uint64_t n = 0, at = begin_byte(i);
    if (ltok_) {
      std::uint64_t b = offset(i), e = offset(i + 1);
      LLMTRAIN_CHECK(b <= e && e <= tokens_, data_.path(), ": document ", i, " has token offsets [", b, ", ", e,
                     ") outside the file's ", tokens_, " tokens: corrupt token file");
      n = e - b;
    } else {
      std::int32_t size = load<std::int32_t>(index_->data() + sizes_at_ + 4 * i);
      const bool inside = size >= 0 && at <= data_.size() &&
                          static_cast<std::uint64_t>(size) <= (data_.size() - at) / dtype_bytes_;
      LLMTRAIN_CHECK(inside,
                     index_path_, ": sequence ", i, " (", size, " tokens at byte ", at, ") lies outside ", data_.path(),
                     " (", data_.size(), " bytes): corrupt or mismatched .idx/.bin pair");
      n = static_cast<std::uint64_t>(size);
    }
    const unsigned char* p = data_.data() + at;
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

 private:
  void open_ltok() {
    ltok_ = true;
    const std::string& path = data_.path();
    const unsigned char* h = data_.data();
    LLMTRAIN_CHECK(data_.size() >= kTokenFileHeaderBytes && std::memcmp(h, kMagic, 8) == 0, path,
                   ": not an llmtrain token file (bad magic or shorter than its header)");
    std::uint32_t version = load<std::uint32_t>(h + 8);
    LLMTRAIN_CHECK(version == 1, path, ": token file version ", version, " is not supported (expected 1)");
    LLMTRAIN_CHECK(load<std::uint64_t>(h + 56) == hash_bytes(reinterpret_cast<const char*>(h), 56), path,
                   ": corrupt token file header (header hash mismatch)");
    dtype_bytes_ = load<std::uint32_t>(h + 12);
    LLMTRAIN_CHECK(dtype_bytes_ == 2 || dtype_bytes_ == 4, path, ": token size ", dtype_bytes_, " is not 2 or 4");
    dtype_code_ = dtype_bytes_ == 2 ? 8 : 4;
    count_ = load<std::uint64_t>(h + 24);
    tokens_ = load<std::uint64_t>(h + 32);
    const std::uint64_t room = data_.size() - kTokenFileHeaderBytes;
    LLMTRAIN_CHECK(tokens_ <= room / dtype_bytes_ && count_ < (room - tokens_ * dtype_bytes_) / 8 &&
                       kTokenFileHeaderBytes + tokens_ * dtype_bytes_ + (count_ + 1) * 8 == data_.size(),
                   path, ": truncated or corrupt token file: ", data_.size(), " bytes for ", count_, " documents of ",
                   tokens_, " tokens in total");
    offsets_at_ = kTokenFileHeaderBytes + tokens_ * dtype_bytes_;
  }

  void open_megatron() {
    index_path_ = data_.path().substr(0, data_.path().size() - 4) + ".idx";
    index_ = map_unlisted_file(index_path_);
    const unsigned char* h = index_->data();
    LLMTRAIN_CHECK(index_->size() >= kMegatronHeaderBytes && std::memcmp(h, kMegatronMagic, 9) == 0, index_path_,
                   ": not a Megatron index (bad magic \"MMIDIDX\" or shorter than its header)");
    std::uint64_t version = load<std::uint64_t>(h + 9);
    LLMTRAIN_CHECK(version == 1, index_path_, ": Megatron index version ", version, " is not supported (expected 1)");
    dtype_code_ = h[17];
    switch (dtype_code_) {
      case 1: dtype_bytes_ = 1; break;
      case 3: case 8: dtype_bytes_ = 2; break;
      case 4: dtype_bytes_ = 4; break;
      case 5: dtype_bytes_ = 8; break;
      default: LLMTRAIN_FAIL(index_path_, ": token dtype code ", int(dtype_code_),
                             " is not an integer type (1 uint8, 3 int16, 4 int32, 5 int64, 8 uint16)");
    }
    count_ = load<std::uint64_t>(h + 18);
    const std::uint64_t docs = load<std::uint64_t>(h + 26);
    const std::uint64_t room = index_->size() - kMegatronHeaderBytes;
    LLMTRAIN_CHECK(count_ <= room / 12 && docs <= (room - 12 * count_) / 8 &&
                       kMegatronHeaderBytes + 12 * count_ + 8 * docs == index_->size(),
                   index_path_, ": truncated or corrupt Megatron index: ", index_->size(), " bytes for ", count_,
                   " sequences and ", docs, " document indices");
    sizes_at_ = kMegatronHeaderBytes;
    pointers_at_ = sizes_at_ + 4 * count_;
  }

  std::uint64_t offset(std::uint64_t i) const { return load<std::uint64_t>(data_.data() + offsets_at_ + 8 * i); }
  std::int64_t pointer(std::uint64_t i) const {
    std::int64_t p = load<std::int64_t>(index_->data() + pointers_at_ + 8 * i);
    LLMTRAIN_CHECK(p >= 0, index_path_, ": sequence ", i, " has a negative pointer ", p);
    return p;
  }

  std::shared_ptr<const Mapped> map_;
  const Mapped& data_;
  std::shared_ptr<const Mapped> index_;  // Megatron .idx
  std::string index_path_;
  bool ltok_ = false;
  std::uint32_t dtype_bytes_ = 2;
  unsigned dtype_code_ = 8;  // Megatron's codes; .ltok maps onto 8 (uint16) and 4 (int32, ids < 2^31)
  std::uint64_t count_ = 0, tokens_ = 0;
  std::uint64_t offsets_at_ = 0, sizes_at_ = 0, pointers_at_ = 0;
};

}  // namespace

LoadedBlock read_token_block(const CorpusFile& file, const ShardBlock& range, LoadedBlock block) {
  block.reset();
  std::shared_ptr<const Mapped> map = map_file(file.path, listed_identity(file));
  block.error = size_change(file, map->size());
  if (!block.error.empty()) {
    block.size_changed = true;
    return block;
  }
  TokenDocs docs(file, std::move(map));
  std::uint64_t previous = 0;
  for (std::uint64_t i = docs.lower_bound(range.begin); i < docs.count(); ++i) {
    const std::uint64_t at = docs.begin_byte(i);
    if (at >= range.end) break;
    LLMTRAIN_CHECK(at >= previous, file.path, ": document ", i, " starts at byte ", at, ", before the previous one (",
                   previous, "): corrupt index");
    previous = at;
    const std::uint64_t begin = block.data.size();
    docs.append(i, block.data);
    // A document without tokens shares its key (byte offset) with the next one: like a blank line of JSON
    // Lines, it is not a record, so each key names one document.
    if (block.data.size() > begin) block.records.push_back({begin, block.data.size(), at});
  }
  return block;
}

std::string read_token_record(const CorpusFile& file, std::uint64_t byte_offset) {
  std::shared_ptr<const Mapped> map = map_file(file.path, listed_identity(file));
  const std::string change = size_change(file, map->size());
  LLMTRAIN_CHECK(change.empty(), file.path, ": ", change, "; ", size_change_consequence());
  TokenDocs docs(file, std::move(map));
  std::string out;
  // Documents without tokens starting at the same byte come first: the record is the one with tokens.
  for (std::uint64_t i = docs.lower_bound(byte_offset); out.empty(); ++i) {
    LLMTRAIN_CHECK(i < docs.count() && docs.begin_byte(i) == byte_offset, file.path, ": no document starts at byte ",
                   byte_offset);
    docs.append(i, out);
  }
  return out;
}

TokenFileWriter::TokenFileWriter(std::string path, std::uint64_t vocab_size, std::uint64_t tokenizer_fingerprint)
    : path_(std::move(path)),
      tmp_(path_ + ".tmp"),
      vocab_size_(vocab_size),
      fingerprint_(tokenizer_fingerprint),
      dtype_bytes_(vocab_size <= 65536 ? 2 : 4),
      checksum_(kFnvStart) {
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
  checksum_ = fnv(checksum_, buffer_.data(), buffer_.size());
  offsets_.push_back(offsets_.back() + tokens.size());
}

void TokenFileWriter::finish() {
  const auto* offsets = reinterpret_cast<const unsigned char*>(offsets_.data());
  write(offsets, offsets_.size() * 8);
  checksum_ = fnv(checksum_, offsets, offsets_.size() * 8);
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
    auto map = std::make_shared<const Mapped>(path);
    const Mapped& m = *map;
    TokenDocs docs(file, map);  // header, sizes
    if (load<std::uint64_t>(m.data() + 40) != tokenizer_fingerprint) {
      why = "written with another tokenizer";
      return false;
    }
    std::uint64_t sum = fnv(kFnvStart, m.data() + kTokenFileHeaderBytes, m.size() - kTokenFileHeaderBytes);
    if (sum != load<std::uint64_t>(m.data() + 48)) {
      why = "checksum mismatch";
      return false;
    }
    std::string tokens;
    for (std::uint64_t i = 0; i < docs.count(); ++i) {
      tokens.clear();
      docs.append(i, tokens);  // offsets in range and increasing
    }
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

}  // namespace llmtrain::data
