// The configuration path and the paths the configuration names: anything but a regular file (or, for
// inputs, a directory) is refused with the path and the problem, and nothing blocks. A FIFO or /dev/zero
// used to hang the reader; if that came back, this program would hang and ctest's TIMEOUT would fail it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "config_fixture.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

namespace fs = std::filesystem;

namespace {

using llmtrain_test::ConfigTest;

std::string load_error(const std::string& path) {
  try {
    llmtrain::load_config(path);
  } catch (const llmtrain::Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(ConfigTest, ConfigurationPathThatIsNotARegularFile) {
  EXPECT_EQ(load_error(dir_.string()),
            dir_.string() + ": cannot read configuration file: it is a directory, not a regular file");
  const fs::path fifo = dir_ / "fifo.toml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(load_error(fifo.string()), fifo.string() + ": cannot read configuration file: it is a FIFO, not a regular file");
  EXPECT_EQ(load_error("/dev/zero"), "/dev/zero: cannot read configuration file: it is a character device, not a regular file");
}

TEST_F(ConfigTest, ConfigurationPathThatCannotBeOpened) {
  EXPECT_EQ(load_error((dir_ / "absent.toml").string()), (dir_ / "absent.toml").string() +
                                                              ": cannot open configuration file: no such file");
  fs::create_symlink("loop.toml", dir_ / "loop.toml");
  EXPECT_EQ(load_error((dir_ / "loop.toml").string()),
            (dir_ / "loop.toml").string() + ": cannot open configuration file: Too many levels of symbolic links");
  // A symbolic link to a valid file is read through.
  std::ofstream(dir_ / "real.toml") << minimal();
  fs::create_symlink("real.toml", dir_ / "link.toml");
  EXPECT_EQ(load_error((dir_ / "link.toml").string()), "");
}

TEST_F(ConfigTest, ConfigurationLargerThan16MiBIsRefusedUnread) {
  const fs::path big = dir_ / "big.toml";
  std::ofstream(big).close();
  fs::resize_file(big, (std::uintmax_t{16} << 20) + 1);
  EXPECT_EQ(load_error(big.string()),
            big.string() + ": cannot read configuration file: 16777217 bytes, more than the 16 MiB a configuration may have");
  // 16 MiB exactly is read (and then refused by the TOML parser: it is all NUL bytes).
  fs::resize_file(big, std::uintmax_t{16} << 20);
  EXPECT_NE(load_error(big.string()).find(big.string() + ":1:1: TOML syntax error"), std::string::npos);
}

TEST_F(ConfigTest, InputPathsMustBeFilesOrDirectories) {
  ASSERT_EQ(mkfifo((dir_ / "tok.fifo").c_str(), 0600), 0);
  std::string text = minimal();
  const std::string file = (dir_ / "input.toml").string();
  EXPECT_EQ(error_of(text.replace(text.find("tok.json"), 8, "tok.fifo")),
            file + ":7: tokenizer.path: " + (dir_ / "tok.fifo").string() + " is a FIFO, not a file or directory");
  text = minimal();
  EXPECT_EQ(error_of(text.replace(text.find("\"tok.json\""), 10, "\"/dev/zero\"")),
            file + ":7: tokenizer.path: /dev/zero is a character device, not a file or directory");
  text = minimal();
  EXPECT_EQ(error_of(text.replace(text.find("\"corpus\""), 8, "\"tok.fifo\"")),
            file + ":15: data.datasets[0].path: " + (dir_ / "tok.fifo").string() + " is a FIFO, not a file or directory");
  // A tokenizer directory and a single corpus file are what these keys expect.
  std::ofstream(dir_ / "corpus.jsonl") << "{\"text\": \"hi\"}\n";
  text = minimal();
  text.replace(text.find("\"tok.json\""), 10, "\".\"");
  EXPECT_EQ(error_of(text.replace(text.find("\"corpus\""), 8, "\"corpus.jsonl\"")), "");
}

TEST_F(ConfigTest, OutputPathsMustBeDirectoriesWhenTheyExist) {
  const std::string file = (dir_ / "input.toml").string();
  EXPECT_EQ(error_of(minimal("", "run_dir = \"tok.json\"\n")),
            file + ":12: train.run_dir: " + (dir_ / "tok.json").string() + " is a regular file, not a directory");
  EXPECT_EQ(error_of(minimal() + "[log]\ndir = \"/dev/null\"\n"),
            file + ":18: log.dir: /dev/null is a character device, not a directory");
  EXPECT_EQ(error_of(minimal("", "run_dir = \"corpus\"\n") + "[log]\ndir = \"new/dir\"\n"), "");  // existing or not yet
}

}  // namespace
