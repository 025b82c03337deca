// The stable hashes of core/hash.hpp: FNV-1a against the published test vectors (what .ltok checksums and
// tokenizer fingerprints, both stored in files, are made of), fed whole or in pieces.
#include <gtest/gtest.h>

#include <string>

#include "llmtrain/core/hash.hpp"

namespace llmtrain {
namespace {

std::uint64_t fnv1a_of(const std::string& text) { return fnv1a(kFnv1aStart, text.data(), text.size()); }

TEST(Hash, Fnv1aMatchesTheReferenceVectors) {
  EXPECT_EQ(fnv1a_of(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a_of("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a_of("foobar"), 0x85944171f73967e8ull);
}

TEST(Hash, Fnv1aInPiecesIsTheHashOfTheWhole) {
  const std::string text = "foobar";
  for (std::size_t cut = 0; cut <= text.size(); ++cut)
    EXPECT_EQ(fnv1a(fnv1a(kFnv1aStart, text.data(), cut), text.data() + cut, text.size() - cut), fnv1a_of(text))
        << "cut at " << cut;
}

TEST(Hash, HashBytesIsFnv1aMixed) {
  EXPECT_EQ(hash_bytes("foobar", 6), mix64(0x85944171f73967e8ull));
  EXPECT_NE(hash_bytes("foobar", 6), hash_bytes("foobaz", 6));
}

}  // namespace
}  // namespace llmtrain
