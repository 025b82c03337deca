// The stop flag: a real SIGTERM, SIGUSR1 or SIGINT (Ctrl-C) delivered to the process sets it; nothing else
// does. A second SIGINT gets the default action (checked in a child, which it ends).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"

TEST(StopSignal, SigtermSigusr1AndSigintSetTheFlag) {
  llmtrain::install_stop_signal_handlers();
  for (int signum : {SIGTERM, SIGINT, SIGUSR1}) {
    llmtrain::install_stop_signal_handlers();  // SIGINT's handler is reset once it ran
    llmtrain::clear_stop_request();
    EXPECT_FALSE(llmtrain::stop_requested());
    ASSERT_EQ(std::raise(signum), 0);
    EXPECT_TRUE(llmtrain::stop_requested());
    EXPECT_EQ(llmtrain::stop_signal_number(), signum);
  }
  llmtrain::request_stop();  // a request after a signal keeps the signal's number
  EXPECT_EQ(llmtrain::stop_signal_number(), SIGUSR1);
  llmtrain::clear_stop_request();
  llmtrain::request_stop();
  EXPECT_TRUE(llmtrain::stop_requested());
  EXPECT_EQ(llmtrain::stop_signal_number(), 0);
  llmtrain::clear_stop_request();
}

TEST(StopSignal, ASecondSigintEndsTheProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    llmtrain::install_stop_signal_handlers();
    std::raise(SIGINT);
    if (!llmtrain::stop_requested()) _exit(2);
    std::raise(SIGINT);  // the default action: the child ends here
    _exit(3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
}

TEST(StopSignal, AnIgnoredSigintStaysIgnored) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGINT, SIG_IGN);  // as a shell starts a script's background job
    llmtrain::install_stop_signal_handlers();
    std::raise(SIGINT);
    _exit(llmtrain::stop_requested() ? 2 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(StopSignal, SignalsAreNamed) {
  EXPECT_EQ(llmtrain::signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(llmtrain::signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(llmtrain::signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(llmtrain::signal_name(SIGHUP), "signal 1");
}

TEST(Log, LevelNamesParseAndUnknownOnesAreErrors) {
  EXPECT_EQ(llmtrain::parse_log_level("debug"), llmtrain::LogLevel::Debug);
  EXPECT_EQ(llmtrain::parse_log_level("warn"), llmtrain::LogLevel::Warn);
  EXPECT_THROW(llmtrain::parse_log_level("verbose"), llmtrain::Error);
}
