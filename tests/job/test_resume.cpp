// The resume check's comparison of two printed configurations: which differences it reports.
#include <gtest/gtest.h>

#include "resume.hpp"

namespace {

using llmtrain::job::resume_conflicts;

TEST(ResumeConflicts, NumbersCompareByValueWhateverTheirPrintedForm) {
  // A checkpoint written when numbers printed as "1e+04" resumes under the plain form of today.
  EXPECT_TRUE(resume_conflicts("[model]\nrope_theta = 1e+04\nnorm_eps = 1e-05\n",
                               "[model]\nrope_theta = 10000.0\nnorm_eps = 1e-5\n").empty());
  const auto changed = resume_conflicts("[model]\nrope_theta = 1e+04\n", "[model]\nrope_theta = 10001.0\n");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], "model.rope_theta: checkpoint has 1e+04, this run has 10001.0");
}

TEST(ResumeConflicts, TextComparesExactly) {
  EXPECT_EQ(resume_conflicts("[train]\nschedule = \"cosine\"\n", "[train]\nschedule = \"cosine\"  # default\n").size(), 0u);
  EXPECT_EQ(resume_conflicts("[[data.datasets]]\nname = \"1e4\"\n", "[[data.datasets]]\nname = \"10000\"\n").size(), 1u);
}

// A checkpoint written before a setting existed resumes while the run keeps that setting's default (which
// computes what the checkpoint's run computed), and is refused when the run changes it.
TEST(ResumeConflicts, SettingsNewerThanTheCheckpointAtTheirDefault) {
  const std::string saved = "[model]\nd_model = 32\n";
  EXPECT_TRUE(resume_conflicts(saved, "[model]\nd_model = 32\nembedding_multiplier = 1.0  # default\n").empty());
  const auto changed = resume_conflicts(saved, "[model]\nd_model = 32\nembedding_multiplier = 2.0\n");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], "model.embedding_multiplier: checkpoint has (absent), this run has 2.0");
  // A key no schema has is still a difference.
  EXPECT_EQ(resume_conflicts(saved, "[model]\nd_model = 32\nno_such_key = 1\n").size(), 1u);
}

}  // namespace
