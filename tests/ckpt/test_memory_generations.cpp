// The memory tier's directory listing (llmtrain-ckpt list --memory): generations by step, own and buddy parts,
// interrupted writes (.tmp) and other files left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llmtrain/ckpt/memory_tier.hpp"

namespace {

using namespace llmtrain::ckpt;
namespace fs = std::filesystem;

void write(const fs::path& p, std::size_t bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << std::string(bytes, 'x');
}

TEST(MemoryGenerations, ListsPartsByStepOldestFirst) {
  const fs::path dir = fs::temp_directory_path() / "llmtrain_memory_generations";
  fs::remove_all(dir);
  write(dir / "step_00000012" / "part_00000.bin", 10);
  write(dir / "step_00000012" / "part_00001.bin.tmp", 5);  // interrupted
  write(dir / "step_00000012" / "buddy_part_00002.bin", 7);
  write(dir / "step_00000009" / "part_00001.bin", 3);
  write(dir / "step_00000009" / "part_00000.bin", 3);
  write(dir / "step_00000009" / "notes.txt", 100);
  write(dir / "other" / "part_00000.bin", 1);
  const auto generations = list_memory_generations(dir.string());
  ASSERT_EQ(generations.size(), 2u);
  EXPECT_EQ(generations[0].step, 9);
  EXPECT_EQ(generations[0].parts, (std::vector<std::string>{"part_00000.bin", "part_00001.bin"}));
  EXPECT_TRUE(generations[0].buddy_parts.empty());
  EXPECT_EQ(generations[0].bytes, 6u);
  EXPECT_EQ(generations[1].step, 12);
  EXPECT_EQ(generations[1].parts, std::vector<std::string>{"part_00000.bin"});
  EXPECT_EQ(generations[1].buddy_parts, std::vector<std::string>{"buddy_part_00002.bin"});
  EXPECT_EQ(generations[1].bytes, 17u);
  fs::remove_all(dir);
}

TEST(MemoryGenerations, AbsentDirectoryHasNone) {
  EXPECT_TRUE(list_memory_generations("/nonexistent/llmtrain-memory").empty());
}

TEST(MemoryGenerations, PartBytesAreTheRanksShareOfWeightsAndMoments) {
  EXPECT_GE(memory_part_bytes(1000000, 4), 3.0 * 4.0 * 250000);
  EXPECT_LT(memory_part_bytes(1000000, 4), 3.0 * 4.0 * 250000 + 1e6);
}

}  // namespace
