#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "runner/run_setup.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::runner {
namespace {
namespace fs = std::filesystem;
using test::TempDir;

// A project with a tasks file, and options that run /bin/sh as the client (found on PATH).
struct SetupBench {
  TempDir tmp;
  util::Env env = tmp.env();
  RunOptions opts;
  std::vector<std::string> notes;
  SetupBench() {
    env.set("PATH", "/usr/bin:/bin");
    fs::create_directories(tmp / "project");
    opts.project = tmp / "project";
    opts.claude_bin = "sh";
  }
  void tasks(const std::string& yaml) { opts.tasks_file = tmp.write("project/tasks.yaml", yaml); }
  // A new run set up and its folder created (what a started run leaves for --resume).
  RunSetup started() {
    auto s = set_up_new_run(opts, env);
    EXPECT_TRUE(s) << s.error().message;
    if (!s) return {};
    EXPECT_TRUE(s->record.create());
    return std::move(*s);
  }
  Result<RunSetup> resume(const RunSetup& started, RunOptions again) {
    again.resume_run = started.record.state.run_id;
    opts = std::move(again);
    return set_up_resumed_run(opts, env, [this](const std::string& n) { notes.push_back(n); });
  }
};

TEST(RunSetup, ANewRunTakesItsTasksInDependencyOrderAndRecordsTheOptionsItRunsWith) {
  SetupBench b;
  b.tasks("- {id: b, title: B, depends_on: [a]}\n- {id: a, title: A, done: true}\n");
  b.opts.max_iterations = 7;
  b.opts.budget.max_tokens = 1000;
  b.opts.claude_args = {"--model", "opus"};
  auto s = set_up_new_run(b.opts, b.env);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->specs.size(), 2u);
  EXPECT_EQ(s->specs[0].id, "a");
  EXPECT_EQ(s->specs[1].id, "b");
  const RunState& st = s->record.state;
  EXPECT_TRUE(std::regex_match(st.run_id, std::regex(R"(\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{6})")))
      << st.run_id;
  EXPECT_EQ(s->record.folder(), fs::absolute(b.opts.project) / ".ctxkit/runs" / st.run_id);
  EXPECT_FALSE(fs::exists(s->record.folder())) << "the folder is made when the run starts";
  ASSERT_EQ(st.tasks.size(), 2u);
  EXPECT_EQ(st.tasks[0].status, TaskStatus::Done);
  EXPECT_EQ(st.tasks[1].status, TaskStatus::Pending);
  EXPECT_EQ(st.source.kind, "tasks");
  EXPECT_EQ(st.source.tasks_file, fs::absolute(b.opts.tasks_file).string());
  EXPECT_EQ(st.options.max_iterations, 7);
  EXPECT_EQ(st.options.max_tokens, 1000u);
  EXPECT_EQ(st.options.claude_bin, "sh");
  EXPECT_EQ(st.options.claude_args, (std::vector<std::string>{"--model", "opus"}));
  EXPECT_EQ(st.status, "running");
  EXPECT_FALSE(s->summaries_wanted);
}

TEST(RunSetup, AHybridTaskAsksForSummaries) {
  SetupBench b;
  b.tasks("- {id: a, title: A}\n- {id: b, title: B, context_mode: hybrid}\n");
  auto s = set_up_new_run(b.opts, b.env);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->summaries_wanted);
}

TEST(RunSetup, EachWrongInputOfANewRunIsNamed) {
  {
    SetupBench b;
    auto s = set_up_new_run(b.opts, b.env);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message, "nothing to run: give a tasks file or --workflow NAME");
  }
  {
    SetupBench b;
    b.tasks("- {id: a, title: A}\n");
    b.opts.project = b.tmp / "nowhere";
    auto s = set_up_new_run(b.opts, b.env);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message, (b.tmp / "nowhere").string() + " is not a directory");
  }
  {
    SetupBench b;
    b.tasks("- {id: a, title: A}\n- {id: b, title: B, context_mode: sideways}\n");
    auto s = set_up_new_run(b.opts, b.env);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("task 'b': unknown context_mode 'sideways'"),
              std::string::npos)
        << s.error().message;
  }
  {
    SetupBench b;
    b.tasks("- {id: a, title: A, depends_on: [a]}\n");
    auto s = set_up_new_run(b.opts, b.env);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message.rfind(b.opts.tasks_file.string() + ": ", 0), 0u)
        << s.error().message;
  }
}

TEST(RunSetup, AClientNotOnPathStopsARunButNotItsDryRun) {
  SetupBench b;
  b.tasks("- {id: a, title: A}\n");
  b.opts.claude_bin = "no-such-client-anywhere";
  EXPECT_FALSE(set_up_new_run(b.opts, b.env));
  b.opts.dry_run = true;
  EXPECT_TRUE(set_up_new_run(b.opts, b.env));
}

TEST(RunSetup, AResumedRunGoesOnWithItsOwnOptionsButTheClientAndABudgetGivenNow) {
  SetupBench b;
  b.tasks("- {id: a, title: A}\n");
  b.opts.max_iterations = 9;
  b.opts.on_fail = OnFail::Skip;
  b.opts.budget.max_tokens = 500;
  RunSetup first = b.started();
  RunOptions again;
  again.project = b.opts.project;
  again.claude_bin = "env";  // another client: named, then used
  auto s = b.resume(first, again);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(b.opts.max_iterations, 9);
  EXPECT_EQ(b.opts.on_fail, OnFail::Skip);
  EXPECT_EQ(b.opts.budget.max_tokens, 500u);
  EXPECT_EQ(s->record.state.options.claude_bin, "env");
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_NE(b.notes[0].find("records claude_bin \"sh\""), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[0].find("this run uses \"env\""), std::string::npos) << b.notes[0];
  ASSERT_EQ(s->specs.size(), 1u);
  EXPECT_EQ(s->specs[0].id, "a");

  // A budget given on the command line replaces the recorded one, and is recorded.
  RunOptions raised;
  raised.project = b.opts.project;
  raised.claude_bin = "env";
  raised.budget.max_tokens = 2000;
  raised.budget_given = true;
  s = std::unexpected(Error{"unset"});  // the first set-up's lock is let go
  auto t = b.resume(first, raised);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(b.opts.budget.max_tokens, 2000u);
  EXPECT_EQ(t->record.state.options.max_tokens, 2000u);
}

TEST(RunSetup, AResumeReadsTheTasksBudgetsAgainFromTheTasksFile) {
  SetupBench b;
  b.tasks("- {id: a, title: A, max_tokens: 100}\n");
  RunSetup first = b.started();
  b.tasks("- {id: a, title: A, max_tokens: 900}\n");
  RunOptions again;
  again.project = b.opts.project;
  again.claude_bin = "sh";
  auto s = b.resume(first, again);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->specs.size(), 1u);
  EXPECT_EQ(s->specs[0].max_tokens, 900u);
  EXPECT_EQ(s->record.state.task_specs.at(0).spec.max_tokens, 900u);
  EXPECT_TRUE(b.notes.empty());

  // A tasks file that no longer reads: the recorded budgets hold, and a note says so.
  b.tasks("- {id: a, title: [\n");
  auto t = (s = std::unexpected(Error{"unset"}), b.resume(first, again));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->specs[0].max_tokens, 100u);
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_NE(b.notes[0].find("the recorded task budgets hold"), std::string::npos) << b.notes[0];
}

TEST(RunSetup, AResumeRefusesACompletedRunALockedOneAndASessionIdThatIsNotOne) {
  SetupBench b;
  b.tasks("- {id: a, title: A}\n");
  RunSetup first = b.started();
  RunOptions again;
  again.project = b.opts.project;
  again.claude_bin = "sh";
  {
    auto held = b.resume(first, again);
    ASSERT_TRUE(held) << held.error().message;
    auto second = b.resume(first, again);
    ASSERT_FALSE(second) << "a run is driven by one ctx-run at a time";
    EXPECT_EQ(second.error().kind, Error::Kind::Busy);
  }
  first.record.state.session.emplace();
  first.record.state.session->id = "--dangerous";
  ASSERT_TRUE(first.record.save());
  auto s = b.resume(first, again);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("the session id \"--dangerous\" is not a session id"),
            std::string::npos)
      << s.error().message;

  first.record.state.session.reset();
  first.record.state.status = "completed";
  ASSERT_TRUE(first.record.save());
  s = b.resume(first, again);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "run " + first.record.state.run_id + " is already complete");
}

}  // namespace
}  // namespace ctxkit::runner
