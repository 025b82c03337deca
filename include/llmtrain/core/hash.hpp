// Stable 64-bit hashes: keys for the loader's keyed permutations and the model's keyed initialisation, and
// FNV-1a, the checksum of .ltok files and the tokenizer's fingerprint.
//
// Stable means the same value on every compiler, library and run (std::hash promises none of this), so a
// key computed on one rank, or in a later job, names the same stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace llmtrain {

// SplitMix64 finaliser: a fast, well-mixed 64-bit hash of one value.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hash of a sequence of values (order matters): keys for permutations and pseudo-random choices.
inline std::uint64_t hash_values(std::initializer_list<std::uint64_t> values) {
  std::uint64_t h = 0x6c6c6d747261696eULL;  // "llmtrain"
  for (std::uint64_t v : values) h = mix64(h ^ mix64(v));
  return h;
}

// FNV-1a, 64 bit, streaming: continues the hash `h` over n more bytes (start from kFnv1aStart). Feeding a
// buffer in pieces gives the hash of the whole.
constexpr std::uint64_t kFnv1aStart = 0xcbf29ce484222325ULL;
inline std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t n) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  return h;
}

// FNV-1a over bytes, then mixed: a stable hash of names and paths.
inline std::uint64_t hash_bytes(const char* data, std::size_t n) { return mix64(fnv1a(kFnv1aStart, data, n)); }

}  // namespace llmtrain
