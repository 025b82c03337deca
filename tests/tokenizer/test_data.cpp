// See test_data.hpp.
#include "test_data.hpp"

#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "llmtrain/core/hash.hpp"

namespace llmtrain::tokenizer::test {
namespace fs = std::filesystem;

std::string data_path(const std::string& name) { return std::string(LLMTRAIN_SOURCE_DIR) + "/tests/tokenizer/data/" + name; }

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir() {
  static const std::string dir = [] {
    const fs::path p = fs::temp_directory_path() / ("llmtrain-tokenizer-test-" + std::to_string(::getpid()));
    fs::create_directories(p);
    std::atexit([] { std::error_code ec; fs::remove_all(fs::temp_directory_path() / ("llmtrain-tokenizer-test-" + std::to_string(::getpid())), ec); });
    return p.string();
  }();
  return dir;
}

std::string unpacked(const std::string& zst_name, const std::string& as) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const fs::path out = fs::path(temp_dir()) / as;
  if (fs::exists(out)) return out.string();
  const std::string packed = read_binary(data_path(zst_name));
  std::string raw;
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_inBuffer in{packed.data(), packed.size(), 0};
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  std::size_t rc = 1;
  while (in.pos < in.size && rc != 0) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    rc = ZSTD_decompressStream(stream, &o, &in);
    if (ZSTD_isError(rc)) break;
    raw.append(chunk.data(), o.pos);
  }
  ZSTD_freeDStream(stream);
  if (ZSTD_isError(rc)) throw std::runtime_error("cannot decompress " + zst_name);
  fs::create_directories(out.parent_path());
  std::ofstream(out, std::ios::binary).write(raw.data(), static_cast<std::streamsize>(raw.size()));
  return out.string();
}

std::string gpt2_dir() {
  unpacked("gpt2_encoder.json.zst", "gpt2/encoder.json");
  return fs::path(unpacked("gpt2_vocab.bpe.zst", "gpt2/vocab.bpe")).parent_path().string();
}

std::string mistral_json() { return unpacked("mistral_tokenizer.json.zst", "mistral/tokenizer.json"); }

std::optional<std::string> llama3_json() {
  // A committed copy wins (if the licence question is settled, adding data/llama3_tokenizer.json.zst with
  // the licence text is all it takes); otherwise the shared folder.
  if (fs::exists(data_path("llama3_tokenizer.json.zst"))) return unpacked("llama3_tokenizer.json.zst", "llama3/tokenizer.json");
  const char* env = std::getenv("LLMTRAIN_SHARED_DIR");
  const std::string shared = env && *env ? env : LLMTRAIN_DEFAULT_SHARED_DIR;
  const fs::path p = fs::path(shared) / "data/tokenizers/llama3/tokenizer.json";
  if (!fs::exists(p)) return std::nullopt;
  return p.string();
}

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus c;
    const std::string blob = read_binary(unpacked("corpus.bin.zst", "corpus.bin"));
    for (std::size_t pos = 0; pos < blob.size();) {
      const std::size_t eol = blob.find('\n', pos);
      if (blob.compare(pos, 5, "#doc ") != 0 || eol == std::string::npos) throw std::runtime_error("bad corpus record");
      const std::size_t n = std::stoull(blob.substr(pos + 5, eol - pos - 5));
      c.docs.push_back(blob.substr(eol + 1, n));
      pos = eol + 1 + n;
    }
    std::istringstream tsv(read_binary(data_path("corpus_ref.tsv")));
    std::string line;
    while (std::getline(tsv, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string index, field;
      fields >> index;
      std::vector<std::string> row;
      while (fields >> field) row.push_back(field);
      c.refs.push_back(row);
    }
    if (c.refs.size() != c.docs.size()) throw std::runtime_error("corpus and reference sizes differ");
    return c;
  }();
  return c;
}

namespace {
std::string digest(std::size_t count, const unsigned char* bytes, std::size_t n) {
  const std::uint64_t h = fnv1a(kFnv1aStart, bytes, n);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu:%016llx", count, static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

std::string ids_digest(const std::vector<std::int32_t>& ids) {
  std::vector<unsigned char> bytes;
  for (std::int32_t id : ids)
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<unsigned char>((static_cast<std::uint32_t>(id) >> (8 * b)) & 0xFF));
  return digest(ids.size(), bytes.data(), bytes.size());
}

std::string text_digest(const std::string& text) {
  return digest(text.size(), reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

}  // namespace llmtrain::tokenizer::test
