// The process-wide logger behind log_info() and friends. A mutex keeps lines whole when loader threads
// log; the per-rank file is flushed after every line, so a rank that is killed or aborted (MPI_Abort from
// another rank) still leaves everything it logged. Log lines are few (per step at most), so this costs
// nothing measurable.
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/timer.hpp"

#include <cstdio>
#include <fstream>
#include <mutex>

namespace llmtrain {
namespace {

struct Logger {
  std::mutex mutex;
  int rank = 0;
  LogLevel level = LogLevel::Info;
  std::ofstream per_rank;
  Stopwatch since_start;
};

Logger& logger() {
  static Logger instance;
  return instance;
}

const char* level_tag(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warning";
    case LogLevel::Error: return "error";
  }
  return "";
}

std::string line_prefix(const Logger& log) {
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "[%9.3fs r%d] ", log.since_start.seconds(), log.rank);
  return prefix;
}

void write_to_file(Logger& log, const std::string& prefix, const char* tag, const std::string& message) {
  if (!log.per_rank.is_open()) return;
  log.per_rank << prefix << tag << ": " << message << '\n';
  log.per_rank.flush();
}

}  // namespace

LogLevel parse_log_level(const std::string& name) {
  if (name == "debug") return LogLevel::Debug;
  if (name == "info") return LogLevel::Info;
  if (name == "warn") return LogLevel::Warn;
  if (name == "error") return LogLevel::Error;
  LLMTRAIN_FAIL("unknown log level \"", name, "\" (expected debug, info, warn or error)");
}

void configure_logging(int rank, LogLevel level, const std::string& per_rank_file) {
  Logger& log = logger();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.rank = rank;
  log.level = level;
  log.per_rank = std::ofstream();
  if (!per_rank_file.empty()) {
    log.per_rank.open(per_rank_file, std::ios::app);
    LLMTRAIN_CHECK(log.per_rank, per_rank_file, ": cannot open the per-rank log for writing");
  }
}

void log_message(LogLevel level, const std::string& message) {
  Logger& log = logger();
  std::lock_guard<std::mutex> lock(log.mutex);
  if (level < log.level) return;
  const std::string prefix = line_prefix(log);
  const bool to_console = log.rank == 0 || level == LogLevel::Error;
  if (to_console) {
    std::FILE* stream = level >= LogLevel::Warn ? stderr : stdout;
    std::fprintf(stream, "%s%s%s%s\n", prefix.c_str(), level == LogLevel::Info ? "" : level_tag(level),
                 level == LogLevel::Info ? "" : ": ", message.c_str());
    std::fflush(stream);
  }
  write_to_file(log, prefix, level_tag(level), message);
}

void log_fatal_to_file(const std::string& message) {
  Logger& log = logger();
  std::lock_guard<std::mutex> lock(log.mutex);
  write_to_file(log, line_prefix(log), "fatal", message);
}

}  // namespace llmtrain
