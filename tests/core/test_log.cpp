// The per-rank log file: every line is in the file as soon as it is logged (a rank killed or aborted
// mid-run keeps its lines), and the error that ends a rank is written there too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "llmtrain/core/log.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PerRankLog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("llmtrain-log-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "rank-3.log").string();
  }
  void TearDown() override {
    llmtrain::configure_logging(0, llmtrain::LogLevel::Info, "");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace

TEST_F(PerRankLog, InfoLinesReachTheFileWhenLogged) {
  llmtrain::configure_logging(3, llmtrain::LogLevel::Info, path_);
  llmtrain::log_info("loaded ", 12, " files");
  // Read while the logger still holds the file open: nothing may wait in a buffer for the exit.
  EXPECT_NE(read_file(path_).find("r3] info: loaded 12 files\n"), std::string::npos) << read_file(path_);
  llmtrain::log_debug("below the level");
  EXPECT_EQ(read_file(path_).find("below the level"), std::string::npos);
}

TEST_F(PerRankLog, FatalErrorGoesToTheFileOnly) {
  llmtrain::configure_logging(3, llmtrain::LogLevel::Error, path_);
  testing::internal::CaptureStderr();
  llmtrain::log_fatal_to_file("error on rank 3 of 4 (node7): data.bin: truncated");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(read_file(path_).find("r3] fatal: error on rank 3 of 4 (node7): data.bin: truncated\n"),
            std::string::npos)
      << read_file(path_);
}

TEST_F(PerRankLog, FatalErrorWithoutAFileIsANoOp) {
  llmtrain::configure_logging(0, llmtrain::LogLevel::Info, "");
  testing::internal::CaptureStderr();
  llmtrain::log_fatal_to_file("nowhere to go");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(PerRankLog, AnUnwritablePathIsAClearError) {
  try {
    llmtrain::configure_logging(0, llmtrain::LogLevel::Info, dir_.string());  // a directory
    FAIL() << "a directory was accepted as the log file";
  } catch (const llmtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the per-rank log for writing"), std::string::npos) << e.what();
  }
}
