// Values written as TOML text, for the printed configuration (to_toml), docs/config.md and messages: what is
// written this way loads back as the same value.
#pragma once

#include <string>

#include "schema.hpp"

namespace llmtrain::schema {

// Integers as they are, numbers by real_to_toml, strings by quoted() (core/quoted.hpp).
std::string value_to_toml(const Value& value);
// The shortest form that reads back as the same double, plain from 1e-4 to below 1e7 ("1800.0", "0.0003"),
// else with an exponent ("1e-8", "1e9"); nan and inf as TOML writes them.
std::string real_to_toml(double value);

}  // namespace llmtrain::schema
