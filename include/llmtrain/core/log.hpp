// Logging for an SPMD job: rank 0 speaks for the job on stdout; every other rank stays quiet except for
// errors, unless per-rank logs are enabled, in which case every rank also writes all its messages to its
// own file. Each line carries the time since start-up and the rank, and reaches the file when it is logged.
//
//   log_info("loaded ", n, " files");   // arguments are streamed together, like LLMTRAIN_CHECK
#pragma once

#include <string>

#include "llmtrain/core/error.hpp"

namespace llmtrain {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

LogLevel parse_log_level(const std::string& name);  // "debug", "info", "warn", "error"

// Configures the process-wide logger. per_rank_file: "" for none, else a path this rank appends to.
void configure_logging(int rank, LogLevel level, const std::string& per_rank_file);

void log_message(LogLevel level, const std::string& message);

// The error that ends this process, written (and flushed) to the per-rank file only, whatever the level:
// the error path (dist/spmd_main.hpp) prints it to the console its own way, once per job or per rank.
void log_fatal_to_file(const std::string& message);

template <typename... Args>
void log_debug(Args&&... args) { log_message(LogLevel::Debug, cat(std::forward<Args>(args)...)); }
template <typename... Args>
void log_info(Args&&... args) { log_message(LogLevel::Info, cat(std::forward<Args>(args)...)); }
template <typename... Args>
void log_warn(Args&&... args) { log_message(LogLevel::Warn, cat(std::forward<Args>(args)...)); }
template <typename... Args>
void log_error(Args&&... args) { log_message(LogLevel::Error, cat(std::forward<Args>(args)...)); }

}  // namespace llmtrain
