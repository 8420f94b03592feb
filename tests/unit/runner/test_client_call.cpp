#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/client_call.hpp"
#include "util/uuid.hpp"

namespace ctxkit::runner {
namespace {

using Argv = std::vector<std::string>;

TEST(RunnerClientCall, NulBytesBecomeTheReplacementCharacter) {
  EXPECT_EQ(without_nul("plain"), "plain");
  EXPECT_EQ(without_nul(std::string("a\0b\0", 4)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

TEST(RunnerClientCall, ATasksFirstPromptIsItsTextThenTheReportRules) {
  EXPECT_EQ(call_prompt("Do the thing.", 1, 3, false),
            "Do the thing.\n"
            "\n"
            "When the task is complete, end your final message with this line:\n"
            "CTXKIT-TASK: DONE\n"
            "If you cannot complete it, end with:\n"
            "CTXKIT-TASK: BLOCKED <one-line reason>\n"
            "Record key decisions as lines starting with \"Decision:\" (in your final message or "
            "in the progress file).\n");
}

TEST(RunnerClientCall, ALaterAttemptOfAStepSaysWhichAndAsksForTheStepsOutput) {
  EXPECT_EQ(call_prompt("Build it.\n", 2, 3, true),
            "Build it.\n"
            "\n"
            "This is attempt 2 of at most 3: the previous attempt ended without reporting the "
            "step as done. Check the current state of the work and continue.\n"
            "\n"
            "When this step is complete, end your final message with this line:\n"
            "CTXKIT-TASK: DONE\n"
            "If you cannot complete it, end with:\n"
            "CTXKIT-TASK: BLOCKED <one-line reason>\n"
            "Record key decisions as lines starting with \"Decision:\" (in your final message or "
            "in the progress file).\n"
            "Your final message (without the marker line) is recorded as this step's output.\n");
}

TEST(RunnerClientCall, APromptIsNulFreeAndBounded) {
  const std::string p = call_prompt(std::string("x\0y", 3), 1, 1, false);
  EXPECT_EQ(p.rfind("x\xEF\xBF\xBDy\n", 0), 0u);
  EXPECT_EQ(p.find('\0'), std::string::npos);
  EXPECT_LE(call_prompt(std::string(kMaxPromptBytes * 2, 'a'), 1, 1, false).size(),
            kMaxPromptBytes);
}

TEST(RunnerClientCall, AFreshCallNamesItsSessionAndCarriesTheAnchor) {
  EXPECT_EQ(call_argv("claude", {"--model", "m"}, true, "sid", "ANCHOR", "PROMPT"),
            (Argv{"claude", "--model", "m", "--output-format", "stream-json", "--verbose", "-p",
                  "--session-id", "sid", "--append-system-prompt", "ANCHOR", "PROMPT"}));
}

TEST(RunnerClientCall, AResumedCallWithoutAnchorHasNoSystemPrompt) {
  EXPECT_EQ(call_argv("/bin/cl", {}, false, "sid", "", "PROMPT"),
            (Argv{"/bin/cl", "--output-format", "stream-json", "--verbose", "-p", "--resume", "sid",
                  "PROMPT"}));
}

TEST(RunnerClientCall, AFreshCallWithoutSessionGetsANewId) {
  const Argv argv = call_argv("claude", {}, true, "", "", "P");
  ASSERT_EQ(argv.size(), 8u);
  EXPECT_EQ(argv[5], "--session-id");
  EXPECT_TRUE(util::is_uuid(argv[6])) << argv[6];
}

}  // namespace
}  // namespace ctxkit::runner
