// Decoder implementations (see decoders.hpp), each following its Hugging Face counterpart.
#include "decoders.hpp"

#include "byte_level.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

// Maps each character back to its byte; a token with a character outside the alphabet is kept as is.
// The bytes are then read as UTF-8 with invalid sequences replaced by U+FFFD (from_utf8_lossy).
class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    const ByteLevelAlphabet& alphabet = byte_level_alphabet();
    std::string bytes;
    for (const std::string& token : tokens) {
      const std::size_t mark = bytes.size();
      bool ok = unicode::first_invalid(token) == token.size();
      for (std::size_t i = 0; ok && i < token.size();) {
        int len = 0;
        const int b = alphabet.byte_of(unicode::decode(token.data() + i, &len));
        if (b < 0) ok = false;
        else bytes += static_cast<char>(b);
        i += static_cast<std::size_t>(len);
      }
      if (!ok) {
        bytes.resize(mark);
        bytes += token;
      }
    }
    tokens.assign(1, unicode::to_valid_utf8(bytes));
  }
};

void replace_all(std::string& s, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return;
  std::string out;
  std::size_t prev = 0;
  for (std::size_t p = s.find(pattern); p != std::string::npos; p = s.find(pattern, p + pattern.size())) {
    out.append(s, prev, p - prev);
    out += content;
    prev = p + pattern.size();
  }
  out.append(s, prev, std::string::npos);
  s.swap(out);
}

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) replace_all(t, pattern_, content_);
  }

 private:
  std::string pattern_, content_;
};

// "<0xAB>" tokens become their bytes; a run of them that is not valid UTF-8 becomes one U+FFFD per byte.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (unicode::first_invalid(pending) == pending.size()) out.push_back(pending);
      else
        for (std::size_t i = 0; i < pending.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      pending.clear();
    };
    for (std::string& t : tokens) {
      int byte = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') byte = parse_hex(t[3], t[4]);
      if (byte >= 0) {
        pending += static_cast<char>(byte);
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens.swap(out);
  }

 private:
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static int parse_hex(char a, char b) { return hex(a) < 0 || hex(b) < 0 ? -1 : hex(a) * 16 + hex(b); }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, all);
  }
};

// Removes up to `start` leading and `stop` trailing copies of the `content` character from each token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, std::size_t start, std::size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    const std::size_t n = content_.size();
    for (std::string& t : tokens) {
      std::size_t begin = 0, end = t.size();
      for (std::size_t i = 0; i < start_ && end - begin >= n && t.compare(begin, n, content_) == 0; ++i) begin += n;
      for (std::size_t i = 0; i < stop_ && end - begin >= n && t.compare(end - n, n, content_) == 0; ++i) end -= n;
      t = t.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;
  std::size_t start_, stop_;
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first_space)
      : replacement_(std::move(replacement)), strip_first_space_(strip_first_space) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], replacement_, " ");
      if (i == 0 && strip_first_space_ && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_space_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }
std::unique_ptr<Decoder> make_replace_decoder(std::string pattern, std::string content) {
  return std::make_unique<ReplaceDecoder>(std::move(pattern), std::move(content));
}
std::unique_ptr<Decoder> make_byte_fallback_decoder() { return std::make_unique<ByteFallbackDecoder>(); }
std::unique_ptr<Decoder> make_fuse_decoder() { return std::make_unique<FuseDecoder>(); }
std::unique_ptr<Decoder> make_strip_decoder(std::string content, std::size_t start, std::size_t stop) {
  return std::make_unique<StripDecoder>(std::move(content), start, stop);
}
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, bool strip_first_space) {
  return std::make_unique<MetaspaceDecoder>(std::move(replacement), strip_first_space);
}
std::unique_ptr<Decoder> make_decoder_sequence(std::vector<std::unique_ptr<Decoder>> steps) {
  return std::make_unique<SequenceDecoder>(std::move(steps));
}

}  // namespace llmtrain::tokenizer
