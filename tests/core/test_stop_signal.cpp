// The stop flag: a real SIGTERM or SIGUSR1 delivered to the process sets it; nothing else does.
#include <gtest/gtest.h>

#include <csignal>

#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"

TEST(StopSignal, SigtermAndSigusr1SetTheFlag) {
  llmtrain::install_stop_signal_handlers();
  for (int signum : {SIGTERM, SIGUSR1}) {
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

TEST(Log, LevelNamesParseAndUnknownOnesAreErrors) {
  EXPECT_EQ(llmtrain::parse_log_level("debug"), llmtrain::LogLevel::Debug);
  EXPECT_EQ(llmtrain::parse_log_level("warn"), llmtrain::LogLevel::Warn);
  EXPECT_THROW(llmtrain::parse_log_level("verbose"), llmtrain::Error);
}
