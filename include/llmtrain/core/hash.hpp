// Stable 64-bit hashes for keys: the loader's keyed permutations and the model's keyed initialisation.
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

// FNV-1a over bytes, then mixed: a stable hash of names and paths.
inline std::uint64_t hash_bytes(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ULL;
  return mix64(h);
}

}  // namespace llmtrain
