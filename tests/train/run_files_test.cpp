// One run per metrics file: a new run moves an earlier run's metrics.jsonl aside (named by when it was last
// written), a resumed run drops the lines logged after its checkpoint's step and appends.
#include <gtest/gtest.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/train/metrics.hpp"
#include "llmtrain/train/run_files.hpp"

namespace llmtrain::train {
namespace {
namespace fs = std::filesystem;

class RunFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("llmtrain-run-files-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // 2020-01-02 03:04:05 UTC
  static void set_mtime(const std::string& file) {
    const timeval times[2] = {{1577934245, 0}, {1577934245, 0}};
    ASSERT_EQ(::utimes(file.c_str(), times), 0);
  }

  fs::path dir_;
};

TEST_F(RunFiles, SetAsideNamesTheFileByWhenItWasLastWritten) {
  write(path("metrics.jsonl"), "{\"step\":1}\n");
  set_mtime(path("metrics.jsonl"));
  EXPECT_EQ(set_aside(path("metrics.jsonl")), path("metrics.20200102T030405Z.jsonl"));
  EXPECT_FALSE(fs::exists(path("metrics.jsonl")));
  EXPECT_EQ(read(path("metrics.20200102T030405Z.jsonl")), "{\"step\":1}\n");
  // Two earlier runs last written in the same second keep both files.
  write(path("metrics.jsonl"), "{\"step\":2}\n");
  set_mtime(path("metrics.jsonl"));
  EXPECT_EQ(set_aside(path("metrics.jsonl")), path("metrics.20200102T030405Z-2.jsonl"));
  EXPECT_EQ(read(path("metrics.20200102T030405Z.jsonl")), "{\"step\":1}\n");
  EXPECT_EQ(set_aside(path("metrics.jsonl")), "");  // nothing to move
}

// A run that failed before its first step leaves an empty file: the next run must not present it as the
// previous run's log.
TEST_F(RunFiles, SetAsideLeavesAnEmptyFile) {
  write(path("metrics.jsonl"), "");
  EXPECT_EQ(set_aside(path("metrics.jsonl")), "");
  EXPECT_TRUE(fs::exists(path("metrics.jsonl")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(RunFiles, SetAsideRefusesWhatIsNotARegularFile) {
  fs::create_directories(path("metrics.jsonl"));
  try {
    set_aside(path("metrics.jsonl"));
    FAIL() << "a directory was moved aside";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path("metrics.jsonl") + ": expected a regular file"), std::string::npos)
        << e.what();
  }
}

TEST_F(RunFiles, KeepStepsUpToDropsLaterStepsAndTornLines) {
  write(path("m.jsonl"),
        "{\"type\":\"train\",\"step\":1}\n{\"type\":\"train\",\"step\":2}\n{\"type\":\"eval\",\"step\":2}\n"
        "{\"type\":\"train\",\"step\":3}\n{\"type\":\"train\",\"step\":4}\n{\"type\":\"train\",\"st");
  const KeptLines lines = keep_steps_up_to(path("m.jsonl"), 2);
  EXPECT_EQ(lines.kept, 3);
  EXPECT_EQ(lines.dropped, 3);
  EXPECT_EQ(read(path("m.jsonl")),
            "{\"type\":\"train\",\"step\":1}\n{\"type\":\"train\",\"step\":2}\n{\"type\":\"eval\",\"step\":2}\n");
  EXPECT_FALSE(fs::exists(path("m.jsonl.tmp")));
  const KeptLines none = keep_steps_up_to(path("absent.jsonl"), 2);
  EXPECT_EQ(none.kept + none.dropped, 0);
  EXPECT_FALSE(fs::exists(path("absent.jsonl")));
  fs::create_directories(path("dir.jsonl"));
  EXPECT_THROW(keep_steps_up_to(path("dir.jsonl"), 2), Error);
}

StepMetrics step(std::int64_t n) {
  StepMetrics m;
  m.step = n;
  m.loss = 1.0 / double(n);
  return m;
}

TEST_F(RunFiles, ANewRunStartsAnEmptyMetricsFileAndAResumedOneContinuesItsOwn) {
  {
    MetricsLog first(dir_.string());
    first.start(0);
    for (int n = 1; n <= 4; ++n) first.write_step(step(n));
  }
  {
    MetricsLog second(dir_.string());  // a new run in the same run_dir
    second.start(0);
    second.write_step(step(1));
  }
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name == "metrics.jsonl") continue;
    ++files;
    EXPECT_EQ(name.rfind("metrics.", 0), 0u) << name;
    std::ifstream in(entry.path());
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_EQ(lines, 4) << "the first run's file, moved aside whole";
  }
  EXPECT_EQ(files, 1);
  std::string text = read(path("metrics.jsonl"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  {
    MetricsLog more(dir_.string());
    more.start(1);
    more.write_step(step(2));
    more.write_step(step(3));
  }
  {
    MetricsLog resumed(dir_.string());  // resumed from a checkpoint at step 2: step 3's line goes
    resumed.start(2);
    resumed.write_step(step(3));
  }
  text = read(path("metrics.jsonl"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_NE(text.find("\"step\":3"), std::string::npos);
  EXPECT_EQ(text.find("\"step\":3"), text.rfind("\"step\":3")) << "step 3 appears once: " << text;
}

TEST_F(RunFiles, WritingBeforeStartIsAnError) {
  MetricsLog log(dir_.string());
  EXPECT_THROW(log.write_step(step(1)), Error);
  MetricsLog console_only("");
  console_only.write_step(step(1));  // no run_dir: nothing to write, nothing to start
}

}  // namespace
}  // namespace llmtrain::train
