// The one error type of llmtrain and the one way to raise it.
//
// Every failure (bad configuration, malformed input file, MPI or CUDA failure, broken invariant) is an
// llmtrain::Error carrying a message that names what failed with its context (input file and line, key,
// offending value) plus the source location that raised it. The SPMD entry point (dist/spmd_main.hpp)
// adds the rank and ends the whole job. Raise errors with LLMTRAIN_CHECK / LLMTRAIN_FAIL, whose trailing
// arguments are streamed together into the message:
//
//   LLMTRAIN_CHECK(n > 0, path, ":", line, ": expected a positive count, got ", n);
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace llmtrain {

class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* source_file, int source_line)
      : std::runtime_error(message), source_file_(source_file), source_line_(source_line) {}

  // Where in llmtrain's own sources the error was raised (for bug reports, not for users).
  const char* source_file() const noexcept { return source_file_; }
  int source_line() const noexcept { return source_line_; }

 private:
  const char* source_file_;
  int source_line_;
};

// Streams all arguments into one string: cat("x = ", 3, "!") == "x = 3!".
template <typename... Args>
std::string cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

[[noreturn]] inline void throw_error(const char* file, int line, const std::string& message) {
  throw Error(message, file, line);
}

}  // namespace llmtrain

#define LLMTRAIN_FAIL(...) ::llmtrain::throw_error(__FILE__, __LINE__, ::llmtrain::cat(__VA_ARGS__))
#define LLMTRAIN_CHECK(cond, ...)     \
  do {                                \
    if (!(cond)) LLMTRAIN_FAIL(__VA_ARGS__); \
  } while (0)
