// Helpers of the schema's section files (schema_<section>.cpp): one FieldSpec per kind of key, and the
// set/get pair that binds it to a member of Config (or of DatasetConfig for the dataset tables).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "schema.hpp"

namespace llmtrain::schema {

constexpr double kMaxInt = 9.0e15;  // largest integer bound we state (exact in a double)

// Builds the set/get pair for a member `Section Target::*section` -> `Member Section::*member`.
template <typename Target, typename Section, typename Member>
FieldSpec<Target> bind_member(Section Target::*section, Member Section::*member, FieldSpec<Target> spec) {
  spec.set = [section, member](Target& target, const Value& value) {
    target.*section.*member = std::get<Member>(value);
  };
  spec.get = [section, member](const Target& target) -> Value { return target.*section.*member; };
  return spec;
}

// The same for members of the target itself (dataset tables).
template <typename Target, typename Member>
FieldSpec<Target> bind_member(Member Target::*member, FieldSpec<Target> spec) {
  spec.set = [member](Target& target, const Value& value) { target.*member = std::get<Member>(value); };
  spec.get = [member](const Target& target) -> Value { return target.*member; };
  return spec;
}

template <typename T>
FieldSpec<T> integer(const char* section, const char* key, std::int64_t def, double lo, double hi,
                     const char* help) {
  return {section, key, Kind::Integer, def, false, lo, hi, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> real(const char* section, const char* key, double def, double lo, double hi, const char* help) {
  return {section, key, Kind::Real, def, false, lo, hi, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> boolean(const char* section, const char* key, bool def, const char* help) {
  return {section, key, Kind::Boolean, def, false, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> text(const char* section, const char* key, Kind kind, const char* def, const char* help) {
  return {section, key, kind, std::string(def), false, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> required(const char* section, const char* key, Kind kind, const char* help) {
  return {section, key, kind, std::string(), true, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> choice(const char* section, const char* key, const char* def, std::vector<std::string> choices,
                    const char* help) {
  return {section, key, Kind::Choice, std::string(def), false, 0, 0, std::move(choices), help, {}, {}};
}

}  // namespace llmtrain::schema
