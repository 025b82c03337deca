// Normalizer implementations (see normalizers.hpp), matching Hugging Face's NormalizedString operations.
#include "normalizers.hpp"

#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(std::unique_ptr<Matcher> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& text) const override {
    std::string out;
    std::size_t prev = 0;
    for_each_match(*pattern_, text, [&](std::size_t b, std::size_t e) {
      out.append(text, prev, b - prev);
      out += content_;
      prev = e;
    });
    if (prev == 0 && out.empty()) return;  // no match
    out.append(text, prev, std::string::npos);
    text.swap(out);
  }

 private:
  std::unique_ptr<Matcher> pattern_;
  std::string content_;
};

// Strip: removes white space (Rust's char::is_whitespace, i.e. White_Space) at either end.
class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    std::size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        int len = 0;
        if (unicode::char_class(unicode::decode(text.data() + begin, &len)) != unicode::kSpace) break;
        begin += static_cast<std::size_t>(len);
      }
    }
    if (right_) {
      while (end > begin) {
        std::size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        int len = 0;
        if (unicode::char_class(unicode::decode(text.data() + start, &len)) != unicode::kSpace) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_prepend(std::string prefix) { return std::make_unique<Prepend>(std::move(prefix)); }
std::unique_ptr<Normalizer> make_replace(std::unique_ptr<Matcher> pattern, std::string content) {
  return std::make_unique<Replace>(std::move(pattern), std::move(content));
}
std::unique_ptr<Normalizer> make_strip(bool left, bool right) { return std::make_unique<Strip>(left, right); }
std::unique_ptr<Normalizer> make_normalizer_sequence(std::vector<std::unique_ptr<Normalizer>> steps) {
  if (steps.size() == 1) return std::move(steps[0]);
  return std::make_unique<Sequence>(std::move(steps));
}

}  // namespace llmtrain::tokenizer
