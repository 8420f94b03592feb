#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner/anchor.hpp"
#include "runner/git_snapshot.hpp"
#include "runner/summary.hpp"
#include "unit/temp_dir.hpp"
#include "util/process.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::runner {
namespace {

TEST(RunnerAnchor, SourcesList) {
  auto s = parse_anchor_sources("task, git");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->task);
  EXPECT_TRUE(s->git);
  EXPECT_FALSE(s->prompt);
  EXPECT_FALSE(s->summary);
  auto bad = parse_anchor_sources("task,gti");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'gti'"), std::string::npos);
}

TEST(RunnerAnchor, FileTailTakesTheLastLines) {
  test::TempDir dir;
  std::string text;
  for (int i = 1; i <= 30; ++i) text += "line " + std::to_string(i) + "\n";
  dir.write("progress.txt", text);
  EXPECT_EQ(file_tail(dir / "progress.txt", 3), "line 28\nline 29\nline 30");
  EXPECT_EQ(file_tail(dir / "progress.txt", 100).substr(0, 7), "line 1\n");
  EXPECT_EQ(file_tail(dir / "missing.txt", 3), "");
  EXPECT_EQ(file_tail(dir.path(), 3), "");  // a directory
}

TEST(RunnerAnchor, RunnerAnchorHoldsTheSourcesAskedFor) {
  test::TempDir dir;
  dir.write("PROMPT.md", "Build the thing with care.\n");
  dir.write("AGENT.md", "Run make test.\n");
  dir.write("progress.txt", "Decision: use sqlite\nstep two done\n");
  workflow::TaskSpec t;
  t.id = "t2";
  t.title = "Add the parser";
  t.description = "Parse the config.";
  t.acceptance = {"tests pass", "docs updated"};
  AnchorInputs in;
  in.project = dir.path();
  in.task = task_text(t);
  in.progress_file = "progress.txt";
  in.summary = "Task t1: done";
  const std::string a = build_runner_anchor(in);
  EXPECT_NE(a.find("Build the thing with care."), std::string::npos);
  EXPECT_NE(a.find("Run make test."), std::string::npos);
  EXPECT_NE(a.find("Task t2: Add the parser\nParse the config.\nAcceptance criteria:\n- [ ] tests "
                   "pass\n- [ ] docs updated"),
            std::string::npos);
  EXPECT_NE(a.find("step two done"), std::string::npos);
  EXPECT_NE(a.find("Task t1: done"), std::string::npos);
  // Not a git work tree: no git section.
  EXPECT_EQ(a.find("## Git state"), std::string::npos);
  // The same inputs give the same bytes (the prompt cache needs it).
  EXPECT_EQ(a, build_runner_anchor(in));

  auto only = parse_anchor_sources("task");
  in.sources = *only;
  const std::string b = build_runner_anchor(in);
  EXPECT_EQ(b.find("Build the thing"), std::string::npos);
  EXPECT_EQ(b.find("Task t1: done"), std::string::npos);
  EXPECT_NE(b.find("Task t2"), std::string::npos);

  in.sources = AnchorSources{};
  in.max_bytes = 300;
  EXPECT_LE(build_runner_anchor(in).size(), 300u);
}

// The git section from a real repository: branch, uncommitted files without the runner's own
// records under .ctxkit/, the last commits; an empty repository still names its branch.
TEST(RunnerAnchor, GitStateOfARepository) {
  test::TempDir dir;
  auto git = [&](std::vector<std::string> args) {
    util::ProcessSpec spec;
    spec.argv = {"git",
                 "-c",
                 "user.name=t",
                 "-c",
                 "user.email=t@example.com",
                 "-c",
                 "init.defaultBranch=trunk",
                 "-C",
                 dir.path().string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    auto r = util::run_process(spec);
    ASSERT_TRUE(r && r->exit_code == 0) << (r ? r->err : r.error().message);
  };
  git({"init", "-q"});
  dir.write("a.txt", "a\n");
  const std::string empty = git_state(dir.path());
  EXPECT_NE(empty.find("Branch: trunk\nUncommitted files: 1\n"), std::string::npos) << empty;
  EXPECT_EQ(empty.find("Last commits"), std::string::npos);
  git({"add", "a.txt"});
  git({"commit", "-q", "-m", "first commit"});
  dir.write("a.txt", "changed\n");
  dir.write(".ctxkit/runs/r1/run.json", "{}");
  const std::string st = git_state(dir.path());
  EXPECT_NE(st.find("Branch: trunk\nUncommitted files: 1\nLast commits:\n"), std::string::npos)
      << st;
  EXPECT_NE(st.find(" first commit\n"), std::string::npos) << st;
  EXPECT_EQ(git_state(dir / "not-a-repo-subdir-missing"), "");
}

TEST(RunnerSummary, CollectsDecisionsIssuesAndFiles) {
  SummaryInputs in;
  in.task_id = "t1";
  in.title = "Parser";
  in.status = "done";
  in.files_changed = {"src/a.cpp", "src/b.cpp"};
  in.progress_tail = "Decision: use toml++\nnoise\n- Decision: keep errors one line\n";
  in.final_message =
      "Done.\nDecision: use toml++\nKnown issue: slow on 1 GB files\nTODO: fuzz it\nCTXKIT-TASK: "
      "DONE";
  const std::string s = build_task_summary(in, 50);
  EXPECT_NE(s.find("Task t1: Parser\nStatus: done\n"), std::string::npos);
  EXPECT_NE(s.find("- src/a.cpp\n- src/b.cpp\n"), std::string::npos);
  EXPECT_NE(s.find("- use toml++\n- keep errors one line\n"), std::string::npos);
  EXPECT_EQ(s.find("use toml++", s.find("use toml++") + 1), std::string::npos);  // once
  EXPECT_NE(s.find("- slow on 1 GB files\n- fuzz it\n"), std::string::npos);
  // Bounded.
  const std::string cut = build_task_summary(in, 6);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), '\n'), 6);
  EXPECT_NE(cut.find("summary cut"), std::string::npos);
  // Files: the first 20, then a count.
  in.files_changed.clear();
  for (int i = 0; i < 25; ++i) in.files_changed.push_back("f" + std::to_string(i));
  const std::string many = build_task_summary(in, 100);
  EXPECT_NE(many.find("- f19\n- ... and 5 more\n"), std::string::npos);
  EXPECT_EQ(many.find("- f20\n"), std::string::npos);
}

}  // namespace
}  // namespace ctxkit::runner
