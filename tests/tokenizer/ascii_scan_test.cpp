// The tokenizer's per-ISA ASCII scan (src/tokenizer/isa/): every variant the CPU runs returns the offset a
// plain byte loop finds, at every alignment and block boundary, and UTF-8 validation built on each variant
// (unicode::first_invalid) agrees with one built on the byte loop, on random bytes and on the whole
// differential corpus (also with invalid bytes planted in it). The dispatched variant is the widest one.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "isa/ascii_scan.hpp"
#include "test_data.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

std::size_t reference_prefix(const unsigned char* p, std::size_t n) {
  std::size_t i = 0;
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

std::vector<const isa::AsciiScanKernel*> runnable_variants() {
  std::vector<const isa::AsciiScanKernel*> out;
  for (CpuIsa v : {CpuIsa::Sse2, CpuIsa::Avx2, CpuIsa::Avx512})
    if (cpu_runs(v)) out.push_back(&isa::ascii_scan_for(v));
  return out;
}

TEST(AsciiScan, DispatchesToTheWidestVariant) {
  EXPECT_STREQ(isa::ascii_scan_kernel().isa, cpu_isa_name(widest_cpu_isa()));
  EXPECT_STREQ(isa::ascii_scan_for(CpuIsa::Sse2).isa, "sse2");
  EXPECT_STREQ(isa::ascii_scan_for(CpuIsa::Avx2).isa, "avx2");
  EXPECT_STREQ(isa::ascii_scan_for(CpuIsa::Avx512).isa, "avx512");
}

TEST(AsciiScan, EveryVariantFindsTheFirstNonAsciiByte) {
  std::mt19937 rng(15);
  std::vector<unsigned char> buffer(512 + 64);
  for (auto& b : buffer) b = static_cast<unsigned char>(rng() % 0x80);
  for (const auto* kernel : runnable_variants()) {
    SCOPED_TRACE(kernel->isa);
    for (std::size_t offset = 0; offset < 64; offset += 7) {  // alignments
      for (std::size_t n : {0, 1, 63, 64, 65, 127, 128, 129, 300, 512}) {
        const unsigned char* p = buffer.data() + offset;
        ASSERT_EQ(kernel->ascii_prefix(p, n), n) << "all ASCII, n " << n << " offset " << offset;
        for (std::size_t at = 0; at < n; at += (at < 130 ? 1 : 37)) {  // each block position, then a sample
          const unsigned char saved = buffer[offset + at];
          buffer[offset + at] = static_cast<unsigned char>(0x80 + rng() % 0x80);
          ASSERT_EQ(kernel->ascii_prefix(p, n), reference_prefix(p, n)) << "n " << n << " offset " << offset
                                                                        << " non-ASCII at " << at;
          ASSERT_EQ(kernel->ascii_prefix(p, n), at);
          buffer[offset + at] = saved;
        }
      }
    }
  }
}

void expect_same_validation(const std::string& text) {
  const std::size_t expected = unicode::first_invalid(text, reference_prefix);
  for (const auto* kernel : runnable_variants())
    ASSERT_EQ(unicode::first_invalid(text, kernel->ascii_prefix), expected) << kernel->isa;
  ASSERT_EQ(unicode::first_invalid(text), expected) << "dispatched";
}

TEST(AsciiScan, ValidationAgreesOnRandomBytes) {
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {"a", "hello world ", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                           "\x80", "\xC3", "\xED\xA0\x80", "\xF4\x90\x80\x80", std::string(70, 'x')};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int count = static_cast<int>(rng() % 40);
    for (int k = 0; k < count; ++k) text += pieces[rng() % pieces.size()];
    expect_same_validation(text);
  }
}

TEST(AsciiScan, ValidationAgreesOnTheCorpus) {
  std::mt19937 rng(3);
  std::size_t invalid_found = 0;
  for (const std::string& doc : test::corpus().docs) {
    expect_same_validation(doc);
    if (doc.empty()) continue;
    std::string broken = doc;  // a stray continuation byte somewhere in real text
    broken[rng() % broken.size()] = '\x80';
    expect_same_validation(broken);
    invalid_found += unicode::first_invalid(broken) != broken.size();
  }
  EXPECT_GT(invalid_found, 0u);  // the planted bytes were seen
}

}  // namespace
}  // namespace llmtrain::tokenizer
