// Block and record reading, decompression and text extraction (see records.hpp).
#include "records.hpp"

#include "token_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <simdjson.h>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {
namespace {

// Reads [offset, offset + n) of an open file; returns fewer bytes at end of file.
bool pread_all(int fd, std::uint64_t offset, std::size_t n, std::string& out, std::string& error) {
  std::size_t old = out.size();
  out.resize(old + n);
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, &out[old + got], n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      error = std::strerror(errno);
      out.resize(old + got);
      return false;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(old + got);
  return true;
}

// The whole decompressed content of a .gz file; `error` is set for unreadable or truncated input.
void read_gzip(const std::string& path, std::string& out, std::string& error) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) {
    error = "cannot open: " + std::string(std::strerror(errno));
    return;
  }
  char buffer[1 << 16];
  for (;;) {
    int n = gzread(gz, buffer, sizeof buffer);
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
    if (n < static_cast<int>(sizeof buffer)) break;
  }
  int code = Z_OK;
  const char* message = gzerror(gz, &code);
  if (code != Z_OK && code != Z_STREAM_END) error = std::string("gzip stream error: ") + message;
  gzclose(gz);
}

// The whole decompressed content of a .zst file (any number of frames).
void read_zstd(const std::string& path, std::string& out, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    error = "cannot open: " + std::string(std::strerror(errno));
    return;
  }
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  std::string in;
  std::vector<char> buffer(ZSTD_DStreamOutSize());
  std::uint64_t offset = 0;
  std::size_t pending = 0;  // ZSTD's hint: 0 when the last frame is complete
  for (;;) {
    in.clear();
    if (!pread_all(fd, offset, ZSTD_DStreamInSize(), in, error)) break;
    if (in.empty()) {
      if (pending != 0) error = "truncated zstd stream";
      break;
    }
    offset += in.size();
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    while (input.pos < input.size) {
      ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
      pending = ZSTD_decompressStream(ctx, &output, &input);
      if (ZSTD_isError(pending)) {
        error = std::string("zstd stream error: ") + ZSTD_getErrorName(pending);
        break;
      }
      out.append(buffer.data(), output.pos);
    }
    if (!error.empty()) break;
  }
  ZSTD_freeDCtx(ctx);
  ::close(fd);
}

// Empty when the file still has the size the schedule was planned with, else what changed. `fd` < 0: by path.
std::string size_change_on_disk(const CorpusFile& file, int fd) {
  struct stat st {};
  const int r = fd >= 0 ? ::fstat(fd, &st) : ::stat(file.path.c_str(), &st);
  if (r != 0) return {};  // not there any more: opening or reading it reports that
  return size_change(file, static_cast<std::uint64_t>(st.st_size));
}

void read_whole(const CorpusFile& file, std::string& out, std::string& error) {
  if (file.format == FileFormat::jsonl_gz) return read_gzip(file.path, out, error);
  if (file.format == FileFormat::jsonl_zst) return read_zstd(file.path, out, error);
  int fd = ::open(file.path.c_str(), O_RDONLY);
  if (fd < 0) {
    error = "cannot open: " + std::string(std::strerror(errno));
    return;
  }
  pread_all(fd, 0, file.size, out, error);
  ::close(fd);
}

bool blank(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return false;
  return true;
}

// Records of JSON Lines text starting at data offsets in [from, to), assuming data[from - 1] is known.
void index_lines(LoadedBlock& block, std::uint64_t from, std::uint64_t to, bool starts_at_from) {
  const std::string& d = block.data;
  std::uint64_t start = from;
  if (!starts_at_from) {
    std::size_t nl = d.find('\n', from);
    start = nl == std::string::npos ? d.size() : nl + 1;
  }
  while (start < to && start < d.size()) {
    std::size_t nl = d.find('\n', start);
    std::uint64_t end = nl == std::string::npos ? d.size() : nl;
    std::uint64_t text_end = end > start && d[end - 1] == '\r' ? end - 1 : end;
    if (!blank(d.data() + start, text_end - start))
      block.records.push_back({start, text_end, block.data_offset + start});
    start = end + 1;
  }
}

}  // namespace

std::string size_change(const CorpusFile& file, std::uint64_t found_bytes) {
  if (found_bytes == file.size) return {};
  return "size changed while the run reads it: planned " + std::to_string(file.size) + " bytes, found " +
         std::to_string(found_bytes);
}

std::string size_change_consequence() {
  return "the logical shards were cut on the planned size, so the documents of this file can no longer be "
         "delivered exactly once. Restore the file, or restart the run: the resume reports the change, and "
         "data.allow_corpus_change = true starts the dataset's next epoch on the files as they are then";
}

LoadedBlock read_block(const CorpusFile& file, const ShardBlock& range, LoadedBlock block) {
  if (is_token_format(file.format)) return read_token_block(file, range, std::move(block));
  block.reset();
  if (!splittable(file.format)) {
    block.error = size_change_on_disk(file, -1);
    if (!block.error.empty()) {
      block.size_changed = true;
      return block;
    }
    read_whole(file, block.data, block.error);
    if (file.format == FileFormat::text) {
      if (block.error.empty()) block.records.push_back({0, block.data.size(), 0});
    } else {
      index_lines(block, 0, block.data.size(), true);
    }
    return block;
  }
  // JSON Lines: read from one byte before the block (to see whether a record starts at its first byte)
  // through the end of the last record that starts inside it.
  int fd = ::open(file.path.c_str(), O_RDONLY);
  if (fd < 0) {
    block.error = "cannot open: " + std::string(std::strerror(errno));
    return block;
  }
  block.error = size_change_on_disk(file, fd);
  if (!block.error.empty()) {
    block.size_changed = true;
    ::close(fd);
    return block;
  }
  block.data_offset = range.begin == 0 ? 0 : range.begin - 1;
  bool ok = pread_all(fd, block.data_offset, range.end - block.data_offset, block.data, block.error);
  while (ok && !block.data.empty() && block.data.back() != '\n') {
    std::size_t before = block.data.size();
    ok = pread_all(fd, block.data_offset + before, 1 << 16, block.data, block.error);
    if (block.data.size() == before) break;  // end of file
    std::size_t nl = block.data.find('\n', before);
    if (nl != std::string::npos) {
      block.data.resize(nl + 1);
      break;
    }
  }
  ::close(fd);
  std::uint64_t from = range.begin - block.data_offset;
  bool starts = range.begin == 0 || (!block.data.empty() && block.data[0] == '\n');
  index_lines(block, from, range.end - block.data_offset, starts);
  return block;
}

std::string read_record(const CorpusFile& file, std::uint64_t byte_offset) {
  if (is_token_format(file.format)) return read_token_record(file, byte_offset);
  std::string data, error;
  if (splittable(file.format)) {
    int fd = ::open(file.path.c_str(), O_RDONLY);
    LLMTRAIN_CHECK(fd >= 0, file.path, ": cannot open: ", std::strerror(errno));
    error = size_change_on_disk(file, fd);
    if (!error.empty()) ::close(fd);
    LLMTRAIN_CHECK(error.empty(), file.path, ": ", error, "; ", size_change_consequence());
    std::size_t nl = std::string::npos;
    while (nl == std::string::npos && error.empty()) {
      std::size_t before = data.size();
      pread_all(fd, byte_offset + before, 1 << 16, data, error);
      if (data.size() == before) break;
      nl = data.find('\n', before);
    }
    ::close(fd);
    if (nl != std::string::npos) data.resize(nl);
  } else {
    error = size_change_on_disk(file, -1);
    LLMTRAIN_CHECK(error.empty(), file.path, ": ", error, "; ", size_change_consequence());
    read_whole(file, data, error);
    LLMTRAIN_CHECK(byte_offset <= data.size(), file.path, ": no record at byte ", byte_offset);
    if (file.format != FileFormat::text) {
      std::size_t nl = data.find('\n', byte_offset);
      data = data.substr(byte_offset, nl == std::string::npos ? std::string::npos : nl - byte_offset);
    }
  }
  LLMTRAIN_CHECK(error.empty(), file.path, ": cannot read the record at byte ", byte_offset, ": ", error);
  // A line's '\r' is not part of its record (as in index_lines); a .txt file's record is all of it.
  if (file.format != FileFormat::text && !data.empty() && data.back() == '\r') data.pop_back();
  return data;
}

void document_tokens(FileFormat format, std::string_view text, const DocumentEncoder& encoder,
                     std::vector<TokenId>& out) {
  if (!is_token_format(format)) {
    encoder.encode(text, out);
    return;
  }
  const std::size_t start = out.size();
  out.resize(start + text.size() / sizeof(TokenId));
  std::memcpy(out.data() + start, text.data(), text.size() / sizeof(TokenId) * sizeof(TokenId));
}

struct TextExtractor::Parser {
  simdjson::dom::parser dom;
};

TextExtractor::TextExtractor() : parser_(std::make_unique<Parser>()) {}
TextExtractor::~TextExtractor() = default;

bool TextExtractor::extract(FileFormat format, std::string_view raw, const std::string& field,
                            std::string_view& text, std::string& why) {
  if (is_token_format(format)) {  // already tokens (validated when the block was read)
    text = raw;
    return true;
  }
  if (format == FileFormat::text) {
    if (!simdjson::validate_utf8(raw.data(), raw.size())) {
      why = "invalid UTF-8";
      return false;
    }
    text = raw;
    return true;
  }
  simdjson::dom::element doc;
  if (auto err = parser_->dom.parse(raw.data(), raw.size()).get(doc)) {
    why = std::string("malformed JSON: ") + simdjson::error_message(err);
    return false;
  }
  simdjson::dom::object object;
  if (doc.get(object)) {
    why = "not a JSON object";
    return false;
  }
  simdjson::dom::element value;
  if (object.at_key(field).get(value)) {
    why = "missing field '" + field + "'";
    return false;
  }
  if (value.get(text)) {
    why = "field '" + field + "' is not a string";
    return false;
  }
  return true;
}

}  // namespace llmtrain::data
