// Resume checks and provenance trimming (see resume.hpp).
#include "resume.hpp"

#include <charconv>
#include <filesystem>
#include <map>
#include <sstream>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/train/run_files.hpp"

namespace llmtrain::job {
namespace {

// "section.key" -> value of a to_toml text; origin comments ("# --set", "# default") dropped.
std::map<std::string, std::string> settings(const std::string& toml) {
  std::map<std::string, std::string> out;
  std::map<std::string, int> array_count;
  std::istringstream in(toml);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("[[", 0) == 0) {
      const std::string array = line.substr(2, line.find("]]") - 2);
      section = cat(array, "[", array_count[array]++, "]");
    } else if (line.rfind("[", 0) == 0) {
      section = line.substr(1, line.find(']') - 1);
    } else if (const auto eq = line.find(" = "); eq != std::string::npos) {
      std::string value = line.substr(eq + 3);
      std::size_t end = value.size();
      if (!value.empty() && value[0] == '"') {
        end = 1;
        while (end < value.size() && value[end] != '"') end += value[end] == '\\' ? 2 : 1;
        ++end;
      } else if (const auto hash = value.find("  #"); hash != std::string::npos) {
        end = hash;
      }
      out[section + "." + line.substr(0, eq)] = value.substr(0, std::min(end, value.size()));
    }
  }
  return out;
}

// Whether two printed values are the same setting: the same text, or numbers of the same value (a checkpoint
// keeps the printed form of its time: 1800 was printed "1.8e+03" before numbers were printed plainly).
bool same_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const auto number = [](const std::string& text, double& value) {
    const char* end = text.data() + text.size();
    const auto result = std::from_chars(text.data(), end, value);
    return !text.empty() && text[0] != '"' && result.ec == std::errc() && result.ptr == end;
  };
  double x = 0, y = 0;
  return number(a, x) && number(b, y) && x == y;
}

}  // namespace

bool may_change_at_resume(const std::string& key) {
  static const char* const exact[] = {"train.steps",     "train.batch_size",  "train.grad_accum",  "train.run_dir",
                                      "train.eval_every", "train.eval_batches", "train.recompute",  "tokenizer.path",
                                      "train.sample_every", "train.sample_prompt", "train.sample_tokens",
                                      "train.device",
                                      "data.threads",     "data.prefetch_rows", "data.prefetch_thread", "data.allow_corpus_change",
                                      "data.on_bad_record", "data.max_bad_fraction"};
  for (const char* k : exact)
    if (key == k) return true;
  for (const char* prefix : {"log.", "checkpoint.", "parallel.", "data.eval_datasets"})
    if (key.rfind(prefix, 0) == 0) return true;
  // Dataset paths may move; names and weights keep the mixing state meaningful.
  return key.rfind("data.datasets[", 0) == 0 && key.size() > 5 && key.compare(key.size() - 5, 5, ".path") == 0;
}

std::string fixed_settings(const std::string& toml) {
  std::string out;
  for (const auto& [key, value] : settings(toml))
    if (!may_change_at_resume(key)) out += key + " = " + value + "\n";
  return out;
}

std::vector<std::string> resume_conflicts(const std::string& saved_toml, const std::string& current_toml) {
  const auto saved = settings(saved_toml), current = settings(current_toml);
  std::vector<std::string> out;
  for (const auto& [key, value] : saved) {
    if (may_change_at_resume(key)) continue;
    const auto it = current.find(key);
    const std::string now = it == current.end() ? "(absent)" : it->second;
    if (!same_value(now, value)) out.push_back(cat(key, ": checkpoint has ", value, ", this run has ", now));
  }
  // A setting newer than the checkpoint (e.g. model.embedding_multiplier) at its default computes what the
  // checkpoint's run computed without it.
  static const auto defaults = settings(to_toml(default_config()));
  for (const auto& [key, value] : current)
    if (!may_change_at_resume(key) && !saved.count(key) && !(defaults.count(key) && same_value(defaults.at(key), value)))
      out.push_back(cat(key, ": checkpoint has (absent), this run has ", value));
  return out;
}

std::vector<std::string> model_conflicts(const std::string& saved_toml, const std::string& current_toml) {
  const auto saved = settings(saved_toml), current = settings(current_toml);
  const auto compared = [](const std::string& key) {
    return key.rfind("model.", 0) == 0 && key != "model.seed" && key != "model.init_std" &&
           key != "model.mask_documents" && key != "model.max_position_embeddings";
  };
  std::vector<std::string> out;
  for (const auto& [key, value] : current) {
    if (!compared(key)) continue;
    const auto it = saved.find(key);
    const std::string then = it == saved.end() ? "(absent)" : it->second;
    if (!same_value(then, value)) out.push_back(cat(key, ": checkpoint has ", then, ", this run has ", value));
  }
  return out;
}

std::string global_batch_change(const std::string& saved_toml, std::int64_t saved_world_size,
                                const std::string& current_toml, std::int64_t current_world_size) {
  const auto saved = settings(saved_toml), current = settings(current_toml);
  for (const char* key : {"train.batch_size", "train.grad_accum"})
    if (!saved.count(key) || !current.count(key)) return "";  // a configuration without them: nothing to compare
  const auto rows_per_rank = [](const std::map<std::string, std::string>& s) {
    return std::stoll(s.at("train.batch_size")) * std::stoll(s.at("train.grad_accum"));
  };
  const std::int64_t saved_rows = saved_world_size * rows_per_rank(saved);
  const std::int64_t per_rank = rows_per_rank(current), rows = current_world_size * per_rank;
  if (rows == saved_rows) return "";
  std::string out = cat("the global batch changes at this resume: ", saved_rows, " rows per step when saved (",
                        counted(saved_world_size, "rank"), " x ", saved.at("train.batch_size"), " rows x ",
                        saved.at("train.grad_accum"), " micro-batches), ", rows, " now (", current_world_size, " x ",
                        current.at("train.batch_size"), " x ", current.at("train.grad_accum"), ")");
  if (saved_rows % current_world_size != 0)
    return cat(out, "; ", saved_rows, " rows cannot be split evenly over ", counted(current_world_size, "rank"));
  return cat(out, "; to keep it, train.batch_size x train.grad_accum = ", saved_rows / current_world_size,
             " on ", counted(current_world_size, "rank"));
}

void trim_provenance(const std::string& run_dir, std::int64_t step) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("provenance.rank", 0) == 0 && entry.path().extension() == ".jsonl")
      train::keep_steps_up_to(entry.path().string(), step);
  }
}

}  // namespace llmtrain::job
