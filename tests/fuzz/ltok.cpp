// Fuzz target: arbitrary bytes as an .ltok token file (src/data/token_files.hpp), read the ways the loader
// reads it: by blocks (read_token_block over the file cut into 1, 2 and 7 byte ranges), by record
// (read_token_record at every document a block found, which must give the same tokens), and whole
// (verify_token_file). Each must succeed or throw llmtrain::Error naming the file. The harness seals the
// header's checksum (bytes 48..56) and hash (56..64) so mutations reach the size and offset checks.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_files.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "token_files.hpp"

namespace data = llmtrain::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::string file_bytes(reinterpret_cast<const char*>(bytes), size);
  const std::uint64_t header = data::kTokenFileHeaderBytes;
  if (file_bytes.size() >= header) {
    const std::uint64_t sum = llmtrain::fnv1a(llmtrain::kFnv1aStart, file_bytes.data() + header, file_bytes.size() - header);
    std::memcpy(file_bytes.data() + 48, &sum, 8);
    const std::uint64_t h = llmtrain::hash_bytes(file_bytes.data(), 56);
    std::memcpy(file_bytes.data() + 56, &h, 8);
  }
  const llmtrain::fuzz::InputDir dir;
  data::CorpusFile file;
  file.path = dir.write("fuzz.ltok", file_bytes);
  file.size = file_bytes.size();
  file.format = data::FileFormat::ltok;
  for (std::uint64_t pieces : {1, 2, 7}) {
    for (std::uint64_t p = 0; p < pieces; ++p) {
      const data::ShardBlock range{0, file.size * p / pieces, file.size * (p + 1) / pieces};
      data::LoadedBlock block;
      try {
        block = data::read_token_block(file, range);
      } catch (const llmtrain::Error&) {
        continue;  // corrupt file: an error naming it is the expected outcome
      }
      // A document a block read must read alone to the same tokens, or fail with an error: offsets that are
      // not in order (seen by verify_token_file's full scan, not by the per-block checks) can hide a
      // document from the binary search of the record lookup.
      for (const auto& record : block.records) {
        std::string tokens;
        try {
          tokens = data::read_token_record(file, record.offset);
        } catch (const llmtrain::Error&) {
          continue;
        }
        if (tokens != block.data.substr(record.begin, record.end - record.begin)) std::abort();
      }
    }
  }
  std::string why;
  data::verify_token_file(file.path, 0, why);
  return 0;
}
