// Reading safetensors files and sharded model directories (see safetensors.hpp).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llmtrain/core/bf16.hpp"
#include "llmtrain/core/error.hpp"
#include "safetensors.hpp"

namespace llmtrain::ckpt {
namespace {

std::uint64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype.rfind("F8", 0) == 0) return 1;
  return 0;
}

// IEEE binary16 -> fp32, exactly (subnormals, infinities and NaNs included).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {  // zero or subnormal: mantissa x 2^-24, exact in fp32
    const float value = std::ldexp(float(mantissa), -24);
    std::memcpy(&bits, &value, sizeof bits);
    bits |= sign;
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace

std::uint64_t SafetensorsEntry::elements() const {
  std::uint64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::map<std::string, SafetensorsEntry> read_safetensors_header(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  LLMTRAIN_CHECK(in, file, ": cannot open");
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(file, ec);
  std::uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), 8);  // little-endian hosts
  LLMTRAIN_CHECK(in && !ec && length <= size - 8, file, ": not a safetensors file (truncated header)");
  std::string text(length, '\0');
  in.read(text.data(), std::streamsize(length));
  LLMTRAIN_CHECK(in, file, ": not a safetensors file (truncated header)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    LLMTRAIN_FAIL(file, ": not a safetensors file (its header is not JSON: ", e.what(), ")");
  }
  LLMTRAIN_CHECK(header.is_object(), file, ": not a safetensors file (its header is not a JSON object)");
  std::map<std::string, SafetensorsEntry> out;
  const std::uint64_t data_start = 8 + length;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") continue;
    SafetensorsEntry e;
    e.file = file;
    try {
      e.dtype = value.at("dtype").get<std::string>();
      e.shape = value.at("shape").get<std::vector<std::uint64_t>>();
      const auto offsets = value.at("data_offsets").get<std::vector<std::uint64_t>>();
      LLMTRAIN_CHECK(offsets.size() == 2, file, ": tensor ", name, ": data_offsets must hold two numbers");
      e.begin = data_start + offsets[0];
      e.end = data_start + offsets[1];
    } catch (const nlohmann::json::exception& error) {
      LLMTRAIN_FAIL(file, ": tensor ", name, ": ", error.what());
    }
    const std::uint64_t element = dtype_bytes(e.dtype);
    LLMTRAIN_CHECK(element > 0, file, ": tensor ", name, ": unknown dtype ", e.dtype);
    LLMTRAIN_CHECK(e.begin <= e.end && e.end <= size && e.end - e.begin == e.elements() * element, file, ": tensor ",
                   name, ": byte range [", e.begin, ", ", e.end, ") does not hold ", e.elements(), " ", e.dtype,
                   " elements inside the file's ", size, " bytes");
    out.emplace(name, std::move(e));
  }
  return out;
}

std::map<std::string, SafetensorsEntry> read_safetensors_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path single = fs::path(dir) / "model.safetensors", index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(single)) return read_safetensors_header(single.string());
  LLMTRAIN_CHECK(fs::exists(index), dir, ": neither model.safetensors nor model.safetensors.index.json is there");
  nlohmann::json map;
  try {
    std::ifstream in(index);
    map = nlohmann::json::parse(in).at("weight_map");
  } catch (const nlohmann::json::exception& e) {
    LLMTRAIN_FAIL(index.string(), ": weight_map: ", e.what());
  }
  std::map<std::string, std::map<std::string, SafetensorsEntry>> files;
  std::map<std::string, SafetensorsEntry> out;
  for (const auto& [name, file] : map.items()) {
    LLMTRAIN_CHECK(file.is_string(), index.string(), ": weight_map: ", name, " must name a file");
    const std::string path = (fs::path(dir) / file.get<std::string>()).string();
    if (!files.count(path)) files[path] = read_safetensors_header(path);
    const auto it = files[path].find(name);
    LLMTRAIN_CHECK(it != files[path].end(), index.string(), ": weight_map puts ", name, " in ", path, ", which does not hold it");
    out.emplace(name, it->second);
  }
  return out;
}

std::vector<unsigned char> read_safetensors_bytes(const SafetensorsEntry& entry) {
  std::ifstream in(entry.file, std::ios::binary);
  std::vector<unsigned char> out(entry.end - entry.begin);
  in.seekg(std::streamoff(entry.begin));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(out.size()));
  LLMTRAIN_CHECK(in, entry.file, ": cannot read bytes [", entry.begin, ", ", entry.end, ")");
  return out;
}

std::vector<float> read_safetensors_floats(const SafetensorsEntry& entry, const std::string& name) {
  const std::vector<unsigned char> bytes = read_safetensors_bytes(entry);
  std::vector<float> out(entry.elements());
  if (entry.dtype == "F32") {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  } else if (entry.dtype == "BF16" || entry.dtype == "F16") {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = entry.dtype == "BF16" ? bf16_to_float(h) : half_to_float(h);
    }
  } else {
    LLMTRAIN_FAIL(entry.file, ": tensor ", name, " is ", entry.dtype, "; the import reads F32, BF16 and F16");
  }
  return out;
}

}  // namespace llmtrain::ckpt
