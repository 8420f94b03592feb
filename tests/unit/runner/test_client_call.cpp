#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/client_call.hpp"
#include "unit/temp_dir.hpp"
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

// One call of a stand-in client (a shell script) in a fresh folder, its notes and how often it
// said it had its result.
struct Invoked {
  Result<CallResult> call;
  std::vector<std::string> notes;
  int results = 0;
};

Invoked invoke_script(const std::string& script, CallLimits limits = {}) {
  test::TempDir tmp;
  Invoked out;
  out.call = invoke_client(
      {"/bin/sh", "-c", script}, tmp.path(), limits, [&out] { ++out.results; },
      [&out](const std::string& n) { out.notes.push_back(n); });
  return out;
}

const std::string kResult =
    R"({"type":"result","subtype":"success","is_error":false,"result":"all done","session_id":"S","usage":{"input_tokens":10,"output_tokens":2}})";

TEST(RunnerInvokeClient, AResultLineIsReadAndItsArrivalToldOnce) {
  auto i = invoke_script("echo '{\"type\":\"system\",\"subtype\":\"init\"}'; echo '" + kResult +
                         "'; echo '" + kResult + "'; echo oops >&2; exit 3");
  ASSERT_TRUE(i.call) << i.call.error().message;
  EXPECT_TRUE(i.call->stream.has_result);
  EXPECT_EQ(i.call->stream.text, "all done");
  EXPECT_EQ(i.call->stream.usage.output, 2u);
  EXPECT_EQ(i.call->exit_code, 3);
  EXPECT_EQ(i.call->stderr_tail, "oops\n");
  EXPECT_GE(i.call->exit_ms, 0);
  EXPECT_FALSE(i.call->timed_out);
  EXPECT_FALSE(i.call->cut_off);
  EXPECT_EQ(i.results, 1);
  EXPECT_TRUE(i.notes.empty());
}

TEST(RunnerInvokeClient, ALastLineWithoutItsNewlineIsRead) {
  auto i = invoke_script("printf '%s' '" + kResult + "'");
  ASSERT_TRUE(i.call) << i.call.error().message;
  EXPECT_TRUE(i.call->stream.has_result);
  EXPECT_EQ(i.call->stream.text, "all done");
  EXPECT_EQ(i.call->exit_ms, -1) << "no result line was handed over while it ran";
}

TEST(RunnerInvokeClient, AClientThatHoldsItsOutputAfterItsResultIsCutOffAndNamed) {
  CallLimits limits;
  limits.exit_grace_seconds = 1;
  auto i = invoke_script("echo '" + kResult + "'; exec sleep 60", limits);
  ASSERT_TRUE(i.call) << i.call.error().message;
  EXPECT_TRUE(i.call->cut_off);
  EXPECT_FALSE(i.call->timed_out);
  EXPECT_TRUE(i.call->stream.has_result);
  EXPECT_LT(i.call->client_ms, 30'000);
  ASSERT_EQ(i.notes.size(), 1u);
  EXPECT_NE(i.notes[0].find("held its output open 1 s after its result"), std::string::npos)
      << i.notes[0];
}

TEST(RunnerInvokeClient, ACallOverItsTimeoutIsKilledAndNamed) {
  CallLimits limits;
  limits.call_timeout_seconds = 1;
  auto i = invoke_script("exec sleep 60", limits);
  ASSERT_TRUE(i.call) << i.call.error().message;
  EXPECT_TRUE(i.call->timed_out);
  EXPECT_FALSE(i.call->stream.has_result);
  EXPECT_EQ(i.results, 0);
  ASSERT_EQ(i.notes.size(), 1u);
  EXPECT_NE(i.notes[0].find("longer than call_timeout_seconds (1 s)"), std::string::npos)
      << i.notes[0];
}

TEST(RunnerInvokeClient, OnlyTheLastTwoThousandBytesOfStderrAreKept) {
  auto i = invoke_script("head -c 5000 /dev/zero | tr '\\0' a >&2; printf b >&2");
  ASSERT_TRUE(i.call) << i.call.error().message;
  ASSERT_EQ(i.call->stderr_tail.size(), 2000u);
  EXPECT_EQ(i.call->stderr_tail.back(), 'b');
  EXPECT_EQ(i.call->stderr_tail.front(), 'a');
}

TEST(RunnerInvokeClient, TheCallsRecordHoldsWhatItGaveAndOnlyTheFlagsThatHold) {
  CallResult c;
  c.exit_code = 1;
  c.stream.has_result = true;
  c.stream.subtype = "success";
  c.stream.num_turns = 2;
  c.stream.text = "done";
  c.stream.cost_usd = 0.5;
  auto j = call_record_json(c, "S1", "done");
  EXPECT_EQ(
      j.dump(),
      R"({"exit_code":1,"session_id":"S1","has_result":true,"is_error":false,"subtype":"success","num_turns":2,"usage":{"input":0,"cache_creation":0,"cache_read":0,"output":0},"cost_usd":0.5,"report":"done","text":"done"})");
  c.stderr_tail = "err";
  c.timed_out = true;
  c.cut_off = true;
  j = call_record_json(c, "S1", "none");
  EXPECT_EQ(j["stderr_tail"], "err");
  EXPECT_EQ(j["timed_out"], true);
  EXPECT_EQ(j["cut_off"], true);
}

}  // namespace
}  // namespace ctxkit::runner
