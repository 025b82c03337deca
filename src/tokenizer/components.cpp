// tokenizer.json component objects -> normalizers, pre-tokenizers, decoders and the post-processor.
#include "components.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain::tokenizer {
namespace {

using json = nlohmann::json;

std::string type_of(const json& j, const std::string& where, const char* kind) {
  LLMTRAIN_CHECK(j.is_object() && j.contains("type") && j["type"].is_string(), where, ": ", kind,
                 " without a \"type\": ", j.dump().substr(0, 200));
  return j["type"].get<std::string>();
}

bool flag(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<bool>();
}

const json& required(const json& j, const char* key, const std::string& where, const std::string& component) {
  auto it = j.find(key);
  LLMTRAIN_CHECK(it != j.end() && !it->is_null(), where, ": ", component, " has no \"", key, "\"");
  return *it;
}

// {"String": "..."} or {"Regex": "..."}
std::unique_ptr<Matcher> build_pattern(const json& j, const std::string& where, const std::string& component) {
  if (j.contains("String")) return make_literal_matcher(j["String"].get<std::string>());
  if (j.contains("Regex")) return make_regex_matcher(j["Regex"].get<std::string>(), where);
  LLMTRAIN_FAIL(where, ": ", component, " pattern must be {\"String\": ...} or {\"Regex\": ...}, got ", j.dump());
}

SplitBehavior parse_behavior(const std::string& name, const std::string& where) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  LLMTRAIN_FAIL(where, ": unsupported Split behavior '", name, "'");
}

// Metaspace's prepend_scheme, or the older add_prefix_space flag.
PrependScheme parse_prepend_scheme(const json& j, const std::string& where) {
  if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
    const std::string s = j["prepend_scheme"].get<std::string>();
    if (s == "always") return PrependScheme::kAlways;
    if (s == "first") return PrependScheme::kFirst;
    if (s == "never") return PrependScheme::kNever;
    LLMTRAIN_FAIL(where, ": unsupported Metaspace prepend_scheme '", s, "'");
  }
  return flag(j, "add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
}

}  // namespace

std::unique_ptr<Normalizer> build_normalizer(const json& j, const std::string& where) {
  const std::string type = type_of(j, where, "normalizer");
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const json& step : required(j, "normalizers", where, "normalizer Sequence"))
      steps.push_back(build_normalizer(step, where));
    return make_normalizer_sequence(std::move(steps));
  }
  if (type == "Prepend") return make_prepend(required(j, "prepend", where, "Prepend").get<std::string>());
  if (type == "Replace")
    return make_replace(build_pattern(required(j, "pattern", where, "Replace"), where, "Replace normalizer"),
                        required(j, "content", where, "Replace").get<std::string>());
  if (type == "Strip") return make_strip(flag(j, "strip_left", true), flag(j, "strip_right", true));
  if (type == "NFC") return make_unicode_normalizer(false, true);
  if (type == "NFKC") return make_unicode_normalizer(true, true);
  if (type == "NFD") return make_unicode_normalizer(false, false);
  if (type == "NFKD") return make_unicode_normalizer(true, false);
  LLMTRAIN_FAIL(where, ": unsupported normalizer '", type,
                "' (supported: Sequence, Prepend, Replace, Strip, NFC, NFKC, NFD, NFKD)");
}

std::unique_ptr<PreTokenizer> build_pre_tokenizer(const json& j, const std::string& where) {
  const std::string type = type_of(j, where, "pre_tokenizer");
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const json& step : required(j, "pretokenizers", where, "pre_tokenizer Sequence")) {
      // ByteLevel without regex and prefix space changes nothing here (BPE runs on raw bytes): skip it.
      if (step.is_object() && step.value("type", "") == "ByteLevel" && !flag(step, "use_regex", true) &&
          !flag(step, "add_prefix_space", true))
        continue;
      steps.push_back(build_pre_tokenizer(step, where));
    }
    if (steps.empty()) return nullptr;
    return make_sequence(std::move(steps));
  }
  if (type == "Split")
    return make_split(build_pattern(required(j, "pattern", where, "Split"), where, "Split"),
                      parse_behavior(required(j, "behavior", where, "Split").get<std::string>(), where),
                      flag(j, "invert", false));
  if (type == "ByteLevel") return make_byte_level(flag(j, "add_prefix_space", true), flag(j, "use_regex", true));
  if (type == "Digits") return make_digits(flag(j, "individual_digits", false));
  if (type == "Metaspace")
    return make_metaspace(j.value("replacement", std::string("\xE2\x96\x81")), parse_prepend_scheme(j, where),
                          flag(j, "split", true));
  LLMTRAIN_FAIL(where, ": unsupported pre_tokenizer '", type,
                "' (supported: Sequence, Split, ByteLevel, Digits, Metaspace)");
}

bool uses_byte_level(const json& j) {
  if (!j.is_object()) return false;
  if (j.value("type", "") == "ByteLevel") return true;
  if (j.contains("pretokenizers"))
    for (const json& step : j["pretokenizers"])
      if (uses_byte_level(step)) return true;
  return false;
}

std::unique_ptr<Decoder> build_decoder(const json& j, const std::string& where) {
  const std::string type = type_of(j, where, "decoder");
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const json& step : required(j, "decoders", where, "decoder Sequence")) steps.push_back(build_decoder(step, where));
    return make_decoder_sequence(std::move(steps));
  }
  if (type == "ByteLevel") return make_byte_level_decoder();
  if (type == "ByteFallback") return make_byte_fallback_decoder();
  if (type == "Fuse") return make_fuse_decoder();
  if (type == "Replace") {
    const json& pattern = required(j, "pattern", where, "Replace decoder");
    LLMTRAIN_CHECK(pattern.contains("String"), where, ": unsupported Replace decoder pattern ", pattern.dump(),
                   " (only {\"String\": ...})");
    return make_replace_decoder(pattern["String"].get<std::string>(),
                                required(j, "content", where, "Replace decoder").get<std::string>());
  }
  if (type == "Strip")
    return make_strip_decoder(required(j, "content", where, "Strip decoder").get<std::string>(),
                              j.value("start", std::size_t{0}), j.value("stop", std::size_t{0}));
  if (type == "Metaspace")
    return make_metaspace_decoder(j.value("replacement", std::string("\xE2\x96\x81")),
                                  parse_prepend_scheme(j, where) != PrependScheme::kNever);
  LLMTRAIN_FAIL(where, ": unsupported decoder '", type,
                "' (supported: Sequence, ByteLevel, ByteFallback, Fuse, Replace, Strip, Metaspace)");
}

void build_post_processor(const json& j, const std::string& where, std::vector<TokenId>& prefix,
                          std::vector<TokenId>& suffix) {
  const std::string type = type_of(j, where, "post_processor");
  if (type == "ByteLevel") return;  // only trims offsets, which we do not compute
  if (type == "Sequence") {
    for (const json& step : required(j, "processors", where, "post_processor Sequence"))
      build_post_processor(step, where, prefix, suffix);
    return;
  }
  LLMTRAIN_CHECK(type == "TemplateProcessing", where, ": unsupported post_processor '", type,
                 "' (supported: TemplateProcessing, ByteLevel, Sequence)");
  const json& specials = required(j, "special_tokens", where, "TemplateProcessing");
  std::vector<TokenId> before, after;
  bool seen_sequence = false;
  for (const json& item : required(j, "single", where, "TemplateProcessing")) {
    if (item.contains("Sequence")) {
      LLMTRAIN_CHECK(!seen_sequence, where, ": TemplateProcessing single template has two sequences");
      seen_sequence = true;
      continue;
    }
    LLMTRAIN_CHECK(item.contains("SpecialToken"), where, ": unsupported TemplateProcessing item ", item.dump());
    const std::string name = item["SpecialToken"]["id"].get<std::string>();
    LLMTRAIN_CHECK(specials.contains(name), where, ": TemplateProcessing uses special token '", name,
                   "' missing from its special_tokens");
    for (const json& id : required(specials[name], "ids", where, "TemplateProcessing special token"))
      (seen_sequence ? after : before).push_back(id.get<TokenId>());
  }
  LLMTRAIN_CHECK(seen_sequence, where, ": TemplateProcessing single template has no $A sequence");
  // A later processor wraps the output of the earlier ones.
  prefix.insert(prefix.begin(), before.begin(), before.end());
  suffix.insert(suffix.end(), after.begin(), after.end());
}

}  // namespace llmtrain::tokenizer
