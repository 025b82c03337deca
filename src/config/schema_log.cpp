// The [log] section of the configuration schema (schema.hpp): console and per-rank logging, traces and
// provenance. Each entry binds a key to its member of LogConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema log_section() {
  using C = Config;
  SectionSchema section{"log", "Console, per-rank and metrics logging.", {}};
  section.fields = {
      bind_member(&C::log, &LogConfig::level, choice<C>("log", "level", "info", {"debug", "info", "warn", "error"},
           "Least severe message printed.")),
      bind_member(&C::log, &LogConfig::per_rank, boolean<C>("log", "per_rank", false,
           "Also write every rank's messages to <log.dir>/rank-<r>.log (rank 0 always prints).")),
      bind_member(&C::log, &LogConfig::dir, text<C>("log", "dir", Kind::OutputPath, "",
           "Directory of per-rank logs; empty means run_dir.")),
      bind_member(&C::log, &LogConfig::every_steps, integer<C>("log", "every_steps", 1, 1, kMaxInt,
           "Print a progress line every N steps (metrics.jsonl gets every step).")),
      bind_member(&C::log, &LogConfig::trace, boolean<C>("log", "trace", false,
           "Every rank writes a Chrome trace of its steps to <run_dir>/trace.rank<R>.json at the end of the run: "
           "compute on each unit and the waits for communication on one track, every all-gather and gradient "
           "reduction on another (open in https://ui.perfetto.dev). Kept in memory: a few events per unit and "
           "micro-batch.")),
      bind_member(&C::log, &LogConfig::provenance, boolean<C>("log", "provenance", false,
           "Every rank writes the rows it consumed (dataset, file, byte offset, tokens, step) to "
           "<run_dir>/provenance.rank<R>.jsonl, in the format of llmtrain-data simulate --provenance, so the "
           "loader's exactly-once audit can check a training run.")),
  };
  return section;
}

}  // namespace llmtrain::schema
