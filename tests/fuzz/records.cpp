// Fuzz target: the record reader (src/data/records.hpp) on arbitrary JSON Lines, gzip, zstd and plain-text
// files. Input: one format byte ('g': .jsonl.gz, 'z': .jsonl.zst, 't': .txt, anything else: .jsonl), then the
// file's bytes. The file is read as the loader reads it: by blocks (a JSON Lines file cut into 1, 2 and 7 byte
// ranges; the others whole), then each record alone by its offset (read_record must give the bytes the block
// gave, or the record of a resumed run would differ), then the text extracted from each record (field
// "text"). Bad input must end as a block error, a bad-record reason or llmtrain::Error, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_files.hpp"
#include "llmtrain/core/error.hpp"
#include "records.hpp"

namespace data = llmtrain::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  data::FileFormat format = data::FileFormat::jsonl;
  const char* name = "fuzz.jsonl";
  switch (bytes[0]) {
    case 'g': format = data::FileFormat::jsonl_gz, name = "fuzz.jsonl.gz"; break;
    case 'z': format = data::FileFormat::jsonl_zst, name = "fuzz.jsonl.zst"; break;
    case 't': format = data::FileFormat::text, name = "fuzz.txt"; break;
    default: break;
  }
  const std::string_view content(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  const llmtrain::fuzz::InputDir dir;
  data::CorpusFile file;
  file.path = dir.write(name, content);
  file.size = content.size();
  file.format = format;
  data::TextExtractor extractor;
  std::string_view text;
  std::string why;
  for (std::uint64_t pieces : {1, 2, 7}) {
    if (pieces > 1 && !data::splittable(format)) break;
    for (std::uint64_t p = 0; p < pieces; ++p) {
      const data::ShardBlock range{0, file.size * p / pieces, file.size * (p + 1) / pieces};
      const data::LoadedBlock block = data::read_block(file, range);
      for (const auto& record : block.records) {
        const std::string_view raw(block.data.data() + record.begin, record.end - record.begin);
        // Not caught: a record of a block that read cleanly must read alone too.
        if (block.error.empty() && data::read_record(file, record.offset) != raw) std::abort();
        extractor.extract(format, raw, "text", text, why);
      }
    }
  }
  return 0;
}
