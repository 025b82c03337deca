// Reading safetensors files (Hugging Face's tensor format): an 8-byte little-endian header length, a JSON
// header naming each tensor's dtype, shape and byte range, then the bytes. The import reads model weights
// with it; the writer is the export's (export_safetensors.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llmtrain::ckpt {

struct SafetensorsEntry {
  std::string file;   // the file it is in
  std::string dtype;  // "F32", "BF16", "F16", ...
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte range in the file, from the start of the file
  std::uint64_t elements() const;
};

// Every tensor of one file by name (the "__metadata__" entry skipped). Errors name the file and what is wrong
// (truncated, header not JSON, a byte range outside the file or not matching dtype x shape).
std::map<std::string, SafetensorsEntry> read_safetensors_header(const std::string& file);

// The tensors of a model directory: model.safetensors, or the files model.safetensors.index.json's weight_map
// names (each tensor looked up in the file the index gives it).
std::map<std::string, SafetensorsEntry> read_safetensors_dir(const std::string& dir);

// A tensor's raw bytes, as stored.
std::vector<unsigned char> read_safetensors_bytes(const SafetensorsEntry& entry);

// A tensor widened to fp32 (exact for F32, BF16 and F16); other dtypes are an error naming the tensor.
std::vector<float> read_safetensors_floats(const SafetensorsEntry& entry, const std::string& name);

}  // namespace llmtrain::ckpt
