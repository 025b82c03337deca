// Fuzz target: arbitrary bytes as a saved data loader state (src/data/state.hpp). decode_state must return a
// state or throw llmtrain::Error. The trailing hash would reject nearly every mutation before the sections
// are parsed, so the harness seals it (rewrites the last 8 bytes as the hash of the rest); the checksum test
// itself lives in the unit tests. A decoded state must describe itself and re-encode to a blob that decodes
// to the same encoding again.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "state.hpp"

namespace data = llmtrain::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::string blob(reinterpret_cast<const char*>(bytes), size);
  if (blob.size() >= 8) {
    const std::uint64_t h = llmtrain::hash_bytes(blob.data(), blob.size() - 8);
    std::memcpy(blob.data() + blob.size() - 8, &h, 8);
  }
  data::SavedState state;
  try {
    state = data::decode_state(blob);
  } catch (const llmtrain::Error&) {
    return 0;
  }
  data::describe(state);
  const std::string encoded = data::encode_state(state);
  if (data::encode_state(data::decode_state(encoded)) != encoded) std::abort();
  return 0;
}
