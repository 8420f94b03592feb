// A workflow step's context action carried out by the supervisor (ctx-rollover --supervise):
// a stand-in interactive client hands the action out (ctx-workflow advance, as the model's
// workflow_advance would) and ends its turn (the Stop hook); the supervisor then ends it, runs
// `/compact <focus>` headless and resumes the session, or starts a fresh one for `/clear`, each
// time with the re-anchor as the first prompt.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;

struct SupervisedRig {
  TempDir tmp;
  fs::path project, bin, log;
  util::Env env;
  explicit SupervisedRig(const std::string& action) {
    project = tmp / "proj";
    bin = tmp / "bin";
    log = tmp / "standin.log";
    fs::create_directories(project / ".ctxkit/workflows");
    fs::create_directories(bin);
    std::ofstream(project / ".ctxkit/workflows/ship.yaml")
        << "name: ship\ndescription: d\nsteps:\n  - id: plan\n    type: action\n    instructions: "
           "Write the plan.\n"
        << "  - id: review\n    type: action\n    context: " << action
        << "\n    compact_focus: what the review needs\n    instructions: Review the build against "
           "the plan.\n";
    const std::string b = CTXKIT_BIN_DIR;
    std::ofstream(bin / "claude")
        << "#!/bin/sh\n"
        << standin_call_logger(300)
        << "case \" $* \" in *\" -p \"*|*\" --resume \"*|*\" --session-id \"*) exit 0 ;; esac\n"
           "trap 'kill \"$sp\" 2>/dev/null; exit 143' TERM\n"
           "CLAUDE_CODE_SESSION_ID=S1 " +
               b +
               "/ctx-workflow advance --output 'the plan' >> \"$STANDIN_LOG\" 2>&1\n"
               "printf '{\"session_id\":\"S1\",\"transcript_path\":\"" +
               (tmp / "t.jsonl").string() + "\",\"cwd\":\"" + project.string() +
               "\",\"hook_event_name\":\"Stop\"}' | CLAUDE_CODE_SESSION_ID=S1 " + b +
               "/ctx-session-hook Stop\n"
               "sleep 20 </dev/null >/dev/null 2>&1 & sp=$!\nwait\necho 'first still running' >> "
               "\"$STANDIN_LOG\"\nexit 3\n";
    fs::permissions(bin / "claude", fs::perms::owner_all);
    env = tmp.env();
    env.set("PATH", bin.string() + ":/usr/bin:/bin");
    env.set("STANDIN_LOG", log.string());
    env.set("CLAUDE_PROJECT_DIR", project.string());
    auto started = run_tool("ctx-workflow", {"start", "ship", "--summary", "ship the parser"}, "",
                            env, project);
    EXPECT_EQ(started.exit_code, 0) << started.err;
  }
  std::vector<std::string> calls() const { return standin_calls(log); }
  // The prompt files left in the supervisor's folder (one is written for each action it hands
  // over; it goes once the action is carried out).
  std::vector<std::string> prompt_files() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(tmp / "home/.local/state/ctxkit/rollovers", ec))
      names.push_back(e.path().filename().string());
    return names;
  }
};

TEST(SupervisedWorkflow, CompactIsRunHeadlessThenTheSessionResumesWithTheReanchor) {
  SupervisedRig r("compact");
  auto res = run_tool("ctx-rollover", {"--supervise", "--", "claude", "--model", "m1"}, "", r.env,
                      r.project);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::string log = read_file(r.log);
  // The model was told to end its turn, not to type the command.
  EXPECT_NE(log.find("ctxkit's supervisor runs `/compact` when this turn ends"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("first still running"), std::string::npos);
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u) << log;
  EXPECT_EQ(calls[0], "call: [--model] [m1]");
  EXPECT_EQ(calls[1], "call: [--model] [m1] [-p] [--resume] [S1] [/compact what the review needs]");
  EXPECT_TRUE(calls[2].starts_with(
      "call: [--model] [m1] [--resume] [S1] [Workflow \"ship\" is in progress"))
      << calls[2];
  EXPECT_NE(calls[2].find("Review the build against the plan."), std::string::npos) << calls[2];
  EXPECT_NE(res.err.find("ctx-rollover: compacting session S1 (focus: what the review needs)"),
            std::string::npos)
      << res.err;
  // The state says the action was handed out, and the supervisor recorded carrying it out.
  auto st = run_tool("ctx-workflow", {"status"}, "", r.env, r.project);
  EXPECT_NE(st.out.find("Context action (compact): handed out at "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find(" by workflow_advance; executed at "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find(" by supervisor"), std::string::npos) << st.out;
  EXPECT_EQ(r.prompt_files(), std::vector<std::string>{});
}

TEST(SupervisedWorkflow, ClearStartsAFreshSessionWithTheReanchor) {
  SupervisedRig r("clear");
  auto res = run_tool("ctx-rollover", {"--supervise", "--", "claude"}, "", r.env, r.project);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(read_file(r.log).find("first still running"), std::string::npos)
      << res.err << read_file(r.log);
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 2u) << read_file(r.log);
  EXPECT_TRUE(calls[1].starts_with("call: [--session-id] [")) << calls[1];
  EXPECT_EQ(calls[1].find("[S1]"), std::string::npos);
  EXPECT_NE(calls[1].find("context was cleared"), std::string::npos) << calls[1];
  EXPECT_NE(calls[1].find("Review the build against the plan."), std::string::npos);
  auto st = run_tool("ctx-workflow", {"status"}, "", r.env, r.project);
  EXPECT_NE(st.out.find("Context action (clear): handed out at "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("executed at "), std::string::npos) << st.out;
  EXPECT_EQ(r.prompt_files(), std::vector<std::string>{});
}

// Without a supervisor nothing is recorded for one, and the model is asked to run the command.
TEST(SupervisedWorkflow, UnsupervisedAdvanceAsksForTheCommand) {
  SupervisedRig r("compact");
  auto adv = run_tool("ctx-workflow", {"advance", "--output", "the plan"}, "", r.env, r.project);
  ASSERT_EQ(adv.exit_code, 0) << adv.err;
  EXPECT_EQ(adv.out.find("supervisor"), std::string::npos) << adv.out;
  EXPECT_FALSE(fs::exists(r.tmp / "home/.local/state/ctxkit/rollovers"))
      << "nothing handed to a supervisor";
}

}  // namespace
}  // namespace ctxkit::test
