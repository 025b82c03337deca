// Checkpoint directories: names, listing (complete files only), LATEST and retention.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llmtrain/ckpt/directory.hpp"

namespace {

using namespace llmtrain::ckpt;
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("llmtrain_ckpt_dir_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

TEST(CheckpointDirectory, NamesSortByStep) {
  EXPECT_EQ(checkpoint_path("d", 7), "d/step_00000007.h5");
  EXPECT_EQ(checkpoint_path("d", 123456789), "d/step_123456789.h5");
}

TEST(CheckpointDirectory, ListsCompleteCheckpointsOnlyOldestFirst) {
  const fs::path dir = fresh_dir("list");
  touch(dir / "step_00000020.h5");
  touch(dir / "step_00000003.h5");
  touch(dir / "step_00000030.h5.tmp");  // an interrupted write
  touch(dir / "step_3.h5");             // not ours
  touch(dir / "LATEST");
  const auto list = list_checkpoints(dir.string());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].step, 3);
  EXPECT_EQ(list[1].step, 20);
  EXPECT_TRUE(list_checkpoints((dir / "absent").string()).empty());
}

TEST(CheckpointDirectory, LatestNamesTheFile) {
  const fs::path dir = fresh_dir("latest");
  write_latest(dir.string(), checkpoint_path(dir.string(), 5));
  std::ifstream in(dir / "LATEST");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step_00000005.h5");
  EXPECT_FALSE(fs::exists(dir / "LATEST.tmp"));
}

TEST(CheckpointDirectory, PruneKeepsTheNewestAndTheMilestones) {
  const fs::path dir = fresh_dir("prune");
  for (int step : {10, 20, 30, 40, 50, 60}) touch(checkpoint_path(dir.string(), step));
  touch(dir / "step_00000055.h5.tmp");
  touch(dir / "step_00000070.h5.tmp");  // possibly being written: newer than every complete one
  const auto removed = prune(dir.string(), 2, 20);
  std::vector<std::int64_t> kept;
  for (const auto& e : list_checkpoints(dir.string())) kept.push_back(e.step);
  EXPECT_EQ(kept, (std::vector<std::int64_t>{20, 40, 50, 60}));
  EXPECT_EQ(removed.size(), 3u);  // 10, 30 and the stale .tmp of step 55
  EXPECT_FALSE(fs::exists(dir / "step_00000055.h5.tmp"));
  EXPECT_TRUE(fs::exists(dir / "step_00000070.h5.tmp"));
  EXPECT_TRUE(prune(dir.string(), 0, 0).empty());  // keep_last 0: keep all
}

}  // namespace
