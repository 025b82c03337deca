// llmtrain-tokenize: JSON Lines in, one JSON array of ids per line out (and back with --decode), plus its
// error messages (file and line) and exit status for bad input.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"

namespace llmtrain::tokenizer {
namespace {

struct Result {
  int status;
  std::string output;  // stdout and stderr
};

// `redirect`: where stdout and stderr go; both come back by default.
Result run(const std::string& args, const std::string& redirect = "2>&1") {
  const std::string command = std::string(LLMTRAIN_TOKENIZE_EXE) + " " + args + " " + redirect;
  FILE* pipe = ::popen(command.c_str(), "r");
  Result r{-1, ""};
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write(const std::string& name, const std::string& content) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(TokenizeCli, EncodesDecodesAndBenches) {
  const std::string tok = test::mistral_json();
  const std::string input = write("in.jsonl", "{\"text\": \"Hello world\"}\n{\"body\": 1, \"text\": \"caf\\u00e9 \\ud83e\\udd99\"}\n");
  const Tokenizer t = Tokenizer::load(tok);
  auto ids_line = [](const std::vector<TokenId>& ids) {
    std::string s = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
    return s + "]\n";
  };
  Result r = run("--tokenizer " + tok + " " + input);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, ids_line(t.encode("Hello world")) + ids_line(t.encode("café 🦙")));
  r = run("--tokenizer " + tok + " --add-special-tokens < " + input);  // stdin
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, ids_line(t.encode_with_special_tokens("Hello world")) + ids_line(t.encode_with_special_tokens("café 🦙")));
  const std::string ids = write("ids.jsonl", ids_line(t.encode("Hello world")) + ids_line(t.encode("café 🦙")));
  r = run("--tokenizer " + tok + " --decode --field body " + ids);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"body\":\"Hello world\"}\n{\"body\":\"café 🦙\"}\n");
  r = run("--tokenizer " + tok + " --bench " + input);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("documents 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MB/s"), std::string::npos);
  r = run("--tokenizer " + tok + " --bench --passes 2 " + input);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string tokens = "tokens " + std::to_string(t.encode("Hello world").size() + t.encode("café 🦙").size());
  EXPECT_NE(r.output.find("pass 1  documents 2  bytes 21  " + tokens), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pass 2  documents 2  bytes 21  " + tokens), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MB/cpu-s"), std::string::npos) << r.output;
  for (const char* bad : {"--bench --passes 0", "--bench --passes x", "--passes 2"}) {
    r = run("--tokenizer " + tok + " " + bad + " " + input);
    EXPECT_EQ(r.status, 1) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--passes"), std::string::npos) << r.output;
  }
}

TEST(TokenizeCli, BadInputNamesFileAndLine) {
  const std::string tok = test::mistral_json();
  const std::string good = "{\"text\": \"ok\"}\n";
  auto error_of = [&](const std::string& args) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 1) << r.output;
    return r.output;
  };
  const std::string malformed = write("malformed.jsonl", good + "{\"text\": \"unterminated}\n");
  EXPECT_NE(error_of("--tokenizer " + tok + " " + malformed).find("malformed.jsonl:2: malformed JSON"), std::string::npos);
  const std::string missing = write("missing.jsonl", good + good + "{\"title\": \"x\"}\n");
  EXPECT_NE(error_of("--tokenizer " + tok + " " + missing).find("missing.jsonl:3: missing field \"text\""), std::string::npos);
  const std::string number = write("number.jsonl", "{\"text\": 5}\n");
  EXPECT_NE(error_of("--tokenizer " + tok + " " + number).find("number.jsonl:1: field \"text\" is not a string"),
            std::string::npos);
  const std::string bad_ids = write("bad_ids.jsonl", "[1, 2]\n[1, \"x\"]\n");
  EXPECT_NE(error_of("--tokenizer " + tok + " --decode " + bad_ids).find("bad_ids.jsonl:2:"), std::string::npos);
  const std::string big_id = write("big_id.jsonl", "[99999999]\n");
  EXPECT_NE(error_of("--tokenizer " + tok + " --decode " + big_id).find("cannot decode id 99999999"), std::string::npos);
  EXPECT_NE(error_of("--tokenizer " + tok + " /nonexistent/in.jsonl").find("/nonexistent/in.jsonl: cannot open"),
            std::string::npos);
  const std::string broken = write("broken.json", "{\"model\": ");
  EXPECT_NE(error_of("--tokenizer " + broken + " " + missing).find("broken.json: not a tokenizer file: malformed JSON"), std::string::npos);
  EXPECT_NE(error_of("").find("--tokenizer is required"), std::string::npos);
  EXPECT_NE(error_of("--tokenizer " + tok + " --bogus").find("unknown option --bogus"), std::string::npos);
}

// Ids must be integers in [0, 2^31): json's conversion used to decode 1.5 as id 1 and 2^32 + 1 as id 1, and
// print 99999999999 as a wrapped negative id.
TEST(TokenizeCli, DecodeRefusesIdsThatAreNotInt32) {
  const std::string tok = test::mistral_json();
  for (const std::string id : {"1.5", "99999999999", "4294967297", "-1", "true"}) {
    const std::string input = write("id.jsonl", "[1, " + id + "]\n");
    const Result r = run("--tokenizer " + tok + " --decode " + input);
    EXPECT_EQ(r.status, 1) << id << ": " << r.output;
    EXPECT_NE(r.output.find("id.jsonl:1: token id " + id + " at position 1 is not an integer in [0, 2147483647]"),
              std::string::npos) << r.output;
  }
}

// Every path argument: a directory, a missing file, and a full disk behind stdout are errors naming the path.
TEST(TokenizeCli, PathsAndFullDiskAreErrorsNamingThem) {
  const std::string tok = test::mistral_json();
  const std::string input = write("in.jsonl", "{\"text\": \"Hello\"}\n");
  Result r = run("--tokenizer " + tok + " " + test::temp_dir());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(test::temp_dir() + ": is a directory"), std::string::npos) << r.output;
  r = run("--tokenizer " + tok + " " + input, "2>&1 >/dev/full");  // stderr comes back, stdout fills up
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("<stdout>: write failed: No space left on device"), std::string::npos) << r.output;
  r = run("--tokenizer " + tok + " --help");
  EXPECT_EQ(r.status, 0);
  for (const char* option : {"--tokenizer FILE", "--field NAME", "--add-special-tokens", "--decode", "--bench", "--passes N"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
  EXPECT_NE(r.output.find("examples:"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace llmtrain::tokenizer
