#include <gtest/gtest.h>

#include "runner/runner.hpp"

namespace ctxkit::runner {
namespace {

// run.json, the run's events and the reports read these strings: they stay as written.
TEST(RunnerStatus, EachEndWritesTheStatusRunJsonHolds) {
  EXPECT_EQ(run_status(RunEnd::Completed), "completed");
  EXPECT_EQ(run_status(RunEnd::Failed), "failed");
  EXPECT_EQ(run_status(RunEnd::Aborted), "aborted");
  EXPECT_EQ(run_status(RunEnd::Stopped), "stopped");
  EXPECT_EQ(run_status(RunEnd::Interrupted), "stopped");
  EXPECT_EQ(run_status(RunEnd::BadInput), "");
}

}  // namespace
}  // namespace ctxkit::runner
