// The Unicode normalizers NFC, NFKC, NFD, NFKD (Unicode 16.0 tables, normalization_tables.inc): full
// decomposition, canonical ordering of combining marks, then canonical composition for the C forms.
// Hangul syllables are decomposed and composed algorithmically. Text whose code points are all below
// U+0300 (NFC, NFD) or U+00A0 (NFKC, NFKD) cannot change and is left alone without decoding.
#include <unordered_map>
#include <vector>

#include "normalizers.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

struct CombiningClass {
  std::uint32_t cp;
  std::uint8_t ccc;
};
struct Decomposition {
  std::uint32_t cp, offset, length;
};
struct Composite {
  std::uint32_t first, second, composed;
};
#include "normalization_tables.inc"

constexpr std::uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr std::uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

struct Tables {
  std::unordered_map<std::uint32_t, std::uint8_t> ccc;
  std::unordered_map<std::uint32_t, std::pair<const std::uint32_t*, std::uint32_t>> canonical, compatibility;
  std::unordered_map<std::uint64_t, std::uint32_t> compose;

  Tables() {
    for (const CombiningClass& c : kCombiningClasses) ccc[c.cp] = c.ccc;
    for (const Decomposition& d : kCanonical) canonical[d.cp] = {kCanonicalData + d.offset, d.length};
    for (const Decomposition& d : kCompatibility) compatibility[d.cp] = {kCompatibilityData + d.offset, d.length};
    for (const Composite& c : kComposites) compose[(std::uint64_t(c.first) << 32) | c.second] = c.composed;
  }
  std::uint8_t combining_class(std::uint32_t cp) const {
    auto it = ccc.find(cp);
    return it == ccc.end() ? 0 : it->second;
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

void decompose(std::uint32_t cp, bool compatibility, std::vector<std::uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const std::uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto& map = compatibility ? tables().compatibility : tables().canonical;
  auto it = map.find(cp);
  if (it == map.end()) {
    out.push_back(cp);
    return;
  }
  out.insert(out.end(), it->second.first, it->second.first + it->second.second);
}

// The composite of a starter and a following character, or 0.
std::uint32_t composite(std::uint32_t a, std::uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  auto it = tables().compose.find((std::uint64_t(a) << 32) | b);
  return it == tables().compose.end() ? 0 : it->second;
}

class UnicodeNormalizer final : public Normalizer {
 public:
  UnicodeNormalizer(bool compatibility, bool compose) : compatibility_(compatibility), compose_(compose) {}

  void normalize(std::string& text) const override {
    const unsigned char stable_below = compatibility_ ? 0xC2 : 0xCC;  // lead bytes of U+00A0 / U+0300
    bool stable = true;
    for (char c : text) stable = stable && static_cast<unsigned char>(c) < stable_below;
    if (stable) return;
    const Tables& t = tables();
    std::vector<std::uint32_t> cps;
    for (std::size_t i = 0; i < text.size();) {
      int len = 0;
      decompose(unicode::decode(text.data() + i, &len), compatibility_, cps);
      i += static_cast<std::size_t>(len);
    }
    // Canonical ordering: stable sort of each run of non-starters by combining class.
    for (std::size_t i = 1; i < cps.size(); ++i) {
      const std::uint8_t c = t.combining_class(cps[i]);
      if (c == 0) continue;
      for (std::size_t j = i; j > 0 && t.combining_class(cps[j - 1]) > c; --j) std::swap(cps[j - 1], cps[j]);
    }
    if (compose_) compose(cps);
    text.clear();
    for (std::uint32_t cp : cps) unicode::append_utf8(text, cp);
  }

 private:
  // Canonical composition: each character joins the last starter unless a character in between blocks it
  // (has combining class 0 or >= its own).
  static void compose(std::vector<std::uint32_t>& cps) {
    const Tables& t = tables();
    std::vector<std::uint32_t> out;
    std::ptrdiff_t starter = -1;
    std::uint8_t last_class = 0;
    for (std::uint32_t cp : cps) {
      const std::uint8_t c = t.combining_class(cp);
      const bool adjacent = starter >= 0 && static_cast<std::size_t>(starter) + 1 == out.size();
      if (starter >= 0 && (adjacent || (last_class != 0 && last_class < c))) {
        if (std::uint32_t joined = composite(out[static_cast<std::size_t>(starter)], cp)) {
          out[static_cast<std::size_t>(starter)] = joined;
          continue;
        }
      }
      if (c == 0) starter = static_cast<std::ptrdiff_t>(out.size());
      last_class = c;
      out.push_back(cp);
    }
    cps.swap(out);
  }

  bool compatibility_, compose_;
};

}  // namespace

std::unique_ptr<Normalizer> make_unicode_normalizer(bool compatibility, bool compose) {
  return std::make_unique<UnicodeNormalizer>(compatibility, compose);
}

}  // namespace llmtrain::tokenizer
