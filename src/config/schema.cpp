// The configuration schema assembled from its sections (schema_<section>.cpp), in documentation order.
#include "schema.hpp"

namespace llmtrain::schema {
namespace {

const std::vector<SectionSchema>& all_sections() {
  static const std::vector<SectionSchema> list = {model_section(),    tokenizer_section(),  data_section(), train_section(),
                                                  parallel_section(), checkpoint_section(), log_section()};
  return list;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& sections() {
  static const std::vector<std::pair<std::string, std::string>> list = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const SectionSchema& section : all_sections()) out.emplace_back(section.name, section.description);
    return out;
  }();
  return list;
}

const std::vector<FieldSpec<Config>>& config_fields() {
  static const std::vector<FieldSpec<Config>> fields = [] {
    std::vector<FieldSpec<Config>> out;
    for (const SectionSchema& section : all_sections()) out.insert(out.end(), section.fields.begin(), section.fields.end());
    return out;
  }();
  return fields;
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::Integer: return "integer";
    case Kind::Real: return "number";
    case Kind::Boolean: return "boolean";
    case Kind::String: return "string";
    case Kind::Choice: return "string";
    case Kind::InputPath: return "path";
    case Kind::InputGlob: return "path or glob";
    case Kind::OutputPath: return "path";
  }
  return "?";
}

}  // namespace llmtrain::schema
