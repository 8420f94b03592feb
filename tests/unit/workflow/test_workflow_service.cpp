#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "unit/temp_dir.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::workflow {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path lanes_fixtures() {
  return test::fixtures().parent_path() / "lanes";
}

const char* kCompactExample = R"(
name: ex
description: Example
steps:
  - id: plan
    type: action
    instructions: Plan.
  - id: build
    type: action
    context: compact
    instructions: Build.
)";

struct Bench {
  test::TempDir tmp;
  fs::path worktree;
  std::optional<double> percent;
  Bench() : worktree(tmp.path() / "wt") { fs::create_directories(worktree); }
  WorkflowService service(const std::string& workflow, std::vector<fs::path> dirs = {}) {
    ServiceOptions o;
    o.worktree = worktree;
    o.workflow = workflow;
    o.search_dirs = dirs.empty() ? std::vector<fs::path>{tmp.path() / "no-such-dir"} : dirs;
    o.env = tmp.env();
    o.context_percent = [this] { return percent; };
    return WorkflowService(std::move(o));
  }
  std::string state() const { return test::read_file(worktree / "workflow-state.json"); }
};

// Every recorded call of the reference server, replayed: same answer text, same error flag,
// same state file, byte for byte. The only adaptation: where the reference answers a `clear`
// from start/advance with its IDE-extension request, ctxkit answers {"contextAction":"/clear"}.
class LanesGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LanesGolden, SameAnswersAndStateFiles) {
  const json scenario = json::parse(test::read_file(lanes_fixtures() / (GetParam() + ".json")));
  Bench b;
  fs::create_directories(b.tmp.path() / ".worktrees");
  const fs::path tpl = b.tmp.write(
      "wf.yaml", test::read_file(lanes_fixtures() / scenario["template"].get<std::string>()));
  auto svc = b.service(tpl.string());
  int call = 0;
  for (const auto& step : scenario["steps"]) {
    if (step.contains("tool")) {
      const std::string tool = step["tool"].get<std::string>();
      // The reference's IDE-only tools are not offered.
      if (tool == "session_clear" || tool == "session_create") continue;
      const json args = step.contains("arguments") ? step["arguments"] : json();
      auto out = svc.call(tool, args);
      // ctxkit adds "focus" to a compact answer when the template sets compact_focus.
      if (auto f = out.text.find(",\n  \"focus\": "); f != std::string::npos)
        out.text.erase(f, out.text.rfind('\n') - f);
      EXPECT_EQ(out.text, step["text"].get<std::string>())
          << "call #" << call << " " << step["tool"] << " " << args.dump();
      EXPECT_EQ(out.is_error, step["is_error"].get<bool>()) << "call #" << call;
      ++call;
    } else if (step.contains("state")) {
      // A summary cut through a surrogate pair: the reference keeps the lone half ("\ud83d"),
      // which UTF-8 cannot hold; ctxkit drops it.
      std::string want = step["state"].get<std::string>();
      for (auto p = want.find("\\ud83d"); p != std::string::npos; p = want.find("\\ud83d"))
        want.erase(p, 6);
      EXPECT_EQ(b.state(), want) << "state " << step["label"];
    } else if (step.contains("remove_state")) {
      fs::remove(b.worktree / "workflow-state.json");
    } else if (step.contains("restart")) {
      svc = b.service(tpl.string());
    }
  }
  EXPECT_GT(call, 0);
}

INSTANTIATE_TEST_SUITE_P(Recorded, LanesGolden,
                         ::testing::Values("a_context_example", "a2_context_full",
                                           "b1_loop_no_tasks", "b2_loop_empty_list_at_loop",
                                           "b3_loop_empty_list_before",
                                           "b4_empty_list_at_loop_next_context", "c_bad_calls",
                                           "e1_start_compact", "e2_start_clear", "e4_ralph_first",
                                           "f_summary", "g_loop_context_pending",
                                           "k_set_tasks_midloop", "m_loop_agent"));

TEST(WorkflowService, ReloadsTheStateOnEveryCallSoARestartLosesNothing) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  {
    auto s1 = b.service(tpl.string());
    ASSERT_FALSE(s1.call("workflow_start", json::object()).is_error);
  }
  // A new process: advance works at once (the reference needs a status or start first).
  auto s2 = b.service(tpl.string());
  auto out = s2.call("workflow_advance", {{"output", "planned"}});
  EXPECT_FALSE(out.is_error) << out.text;
  EXPECT_EQ(out.text,
            "{\n  \"contextAction\": \"/compact\",\n  \"message\": \"Please run `/compact` first, "
            "then call workflow_status again.\"\n}");
  // Another process sees the handed-out flag: status gives the instructions.
  auto s3 = b.service(tpl.string());
  auto st = json::parse(s3.call("workflow_status", json::object()).text);
  EXPECT_EQ(st["step"], "build");
  EXPECT_EQ(json::parse(s3.call("workflow_context", json::object()).text),
            json({{"plan", "planned"}}));
}

// A long-lived server keeps the state it last read or wrote, and still sees every change another
// writer makes (ctx-gate marking an action, another server, an editor).
TEST(WorkflowService, AServerSeesEveryChangeAnotherWriterMakes) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  auto mine = b.service(tpl.string());
  ASSERT_FALSE(mine.call("workflow_start", json::object()).is_error);
  EXPECT_EQ(json::parse(mine.call("workflow_status", json::object()).text)["step"], "plan");
  // Replaced by another writer (a new file under the name).
  {
    auto other = b.service(tpl.string());
    ASSERT_FALSE(other.call("workflow_advance", {{"output", "planned elsewhere"}}).is_error);
  }
  EXPECT_EQ(json::parse(mine.call("workflow_context", json::object()).text),
            json({{"plan", "planned elsewhere"}}));
  // Edited in place to the same size, its modification time put back: still another version.
  const fs::path state = b.worktree / "workflow-state.json";
  struct stat st {};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  const std::string text = b.state();
  {
    std::fstream f(state, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << std::string(text.size(), ' ');
  }
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, state.c_str(), times, 0), 0);
  auto edited = mine.call("workflow_status", json::object());
  EXPECT_TRUE(edited.is_error) << edited.text;
  // Removed.
  fs::remove(state);
  auto gone = mine.call("workflow_status", json::object());
  EXPECT_TRUE(gone.is_error);
  EXPECT_FALSE(fs::exists(state));
}

// The status answer a server keeps with the state it cached is the one a fresh server renders,
// after each of its own changes (an action handed out or not) and each change another writer
// makes.
TEST(WorkflowService, AKeptStatusAnswerIsAlwaysTheCurrentStatesAnswer) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", R"(
name: loop
description: d
loops:
  tasks:
    - id: implement
      instructions: "Implement {task.title}."
    - id: review
      instructions: "Review {task.title}."
      context: compact
steps:
  - id: plan
    type: action
    instructions: Plan.
  - id: tasks
    type: loop
  - id: finish
    type: action
    instructions: Wrap up.
)");
  auto mine = b.service(tpl.string());
  auto fresh_status = [&] { return b.service(tpl.string()).call("workflow_status", json()).text; };
  ASSERT_FALSE(mine.call("workflow_start", json::object()).is_error);
  ASSERT_FALSE(
      mine.call("workflow_set_tasks",
                {{"loop_id", "tasks"},
                 {"tasks", {{{"id", "a"}, {"title", "A"}}, {{"id", "b"}, {"title", "B"}}}}})
          .is_error);
  for (int i = 0; i < 8; ++i) {
    const auto advanced = mine.call("workflow_advance", {{"output", "out " + std::to_string(i)}});
    ASSERT_FALSE(advanced.is_error) << advanced.text;
    const std::string want = fresh_status();
    EXPECT_EQ(mine.call("workflow_status", json()).text, want) << "after advance " << i;
    EXPECT_EQ(mine.call("workflow_status", json()).text, want) << "again after advance " << i;
    if (i == 2) {  // another writer moves on: the kept answer is not given again
      ASSERT_FALSE(b.service(tpl.string()).call("workflow_advance", {{"output", "x"}}).is_error);
      const std::string moved = fresh_status();
      EXPECT_NE(moved, want);
      EXPECT_EQ(mine.call("workflow_status", json()).text, moved);
    }
  }
  EXPECT_NE(mine.call("workflow_status", json()).text.find("\"complete\""), std::string::npos);
}

TEST(WorkflowService, BadCallsAreToolErrorsWithLanesTexts) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  auto s = b.service(tpl.string());
  EXPECT_EQ(s.call("workflow_advance", json::object()).text,
            R"({"error":"Workflow not started. Call workflow_start first."})");
  EXPECT_EQ(s.call("workflow_status", json()).text,
            R"({"error":"Workflow not started. Call workflow_start first."})");
  EXPECT_EQ(s.call("nope", json::object()).text, R"({"error":"Unknown tool: nope"})");
  s.call("workflow_start", json::object());
  auto o = s.call("workflow_advance", {{"output", 5}});
  EXPECT_TRUE(o.is_error);
  EXPECT_EQ(o.text, R"({"error":"output must be a string"})");
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", ""}}).text,
            R"({"error":"loop_id must be a non-empty string"})");
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", "x"}, {"tasks", "t"}}).text,
            R"({"error":"tasks must be an array"})");
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", "x"}, {"tasks", {1}}}).text,
            R"({"error":"Each task must be an object"})");
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", "x"}, {"tasks", {json::object()}}}).text,
            R"({"error":"Each task must have a non-empty id string"})");
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", "x"}, {"tasks", {{{"id", "a"}}}}}).text,
            R"({"error":"Each task must have a non-empty title string"})");
  EXPECT_EQ(
      s.call("workflow_set_tasks", {{"loop_id", "x"}, {"tasks", {{{"id", "a"}, {"title", "b"}}}}})
          .text,
      R"({"error":"Loop 'x' not found in template"})");
  EXPECT_TRUE(s.call("workflow_start", json::array()).is_error);
}

TEST(WorkflowService, TemplateErrorsNameTheFileAndPosition) {
  Bench b;
  const auto tpl = b.tmp.write("bad.yaml",
                               "name: n\ndescription: d\nsteps:\n  - id: s\n    type: action\n    "
                               "instructions: i\n    context: later\n");
  auto s = b.service(tpl.string());
  auto o = s.call("workflow_start", json::object());
  EXPECT_TRUE(o.is_error);
  EXPECT_EQ(
      json::parse(o.text)["error"],
      tpl.string() + ":7:14: Step 's' context must be either 'compact' or 'clear', got: later");
  EXPECT_FALSE(fs::exists(b.worktree / "workflow-state.json"));
}

TEST(WorkflowService, CorruptStateIsAnErrorNotSilentlyReplaced) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  b.tmp.write("wt/workflow-state.json", "{not json");
  auto s = b.service(tpl.string());
  auto o = s.call("workflow_start", json::object());
  EXPECT_TRUE(o.is_error);
  EXPECT_NE(o.text.find("workflow-state.json: workflow state: not valid JSON"), std::string::npos)
      << o.text;
  EXPECT_EQ(b.state(), "{not json");
}

// Naming a workflow does not make a corrupt state replaceable: its outputs would be gone.
TEST(WorkflowService, CorruptStateIsNotReplacedByStartingANamedWorkflow) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  const std::string corrupt =
      R"({"status":"running","step":"build","outputs":{"plan":"three days of work"},})";
  b.tmp.write("wt/workflow-state.json", corrupt);
  auto s = b.service("");
  auto o = s.call("workflow_start", {{"workflow", tpl.string()}});
  EXPECT_TRUE(o.is_error) << o.text;
  EXPECT_NE(o.text.find("workflow state: not valid JSON"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("nothing was started"), std::string::npos) << o.text;
  EXPECT_EQ(b.state(), corrupt);
}

// A state file deeper than any state is refused before it is parsed (copying or printing it
// would recurse once per level).
TEST(WorkflowService, DeeplyNestedStateIsAnErrorNotACrash) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  auto s = b.service(tpl.string());
  ASSERT_FALSE(s.call("workflow_start", json::object()).is_error);
  std::string state = b.state();
  const size_t depth = 500000;
  state.insert(1, "\"deep\": " + std::string(depth, '[') + std::string(depth, ']') + ",");
  b.tmp.write("wt/workflow-state.json", state);
  for (const char* tool : {"workflow_status", "workflow_advance", "workflow_context"}) {
    auto o = b.service(tpl.string()).call(tool, {{"output", "x"}});
    EXPECT_TRUE(o.is_error) << tool;
    EXPECT_NE(o.text.find("workflow state: nested deeper than 128 levels"), std::string::npos)
        << o.text;
  }
  EXPECT_EQ(b.state(), state);
}

// The state file is read only up to kMaxStateBytes, so no save may make it larger: the save is
// refused, the file keeps its last state, and a program started afterwards can still load it.
TEST(WorkflowService, AStateThatWouldOutgrowItsReadLimitIsNotSaved) {
  Bench b;
  const auto tpl = b.tmp.write(
      "wf.yaml",
      "name: r\ndescription: d\nsteps:\n  - {id: polish, type: ralph, n: 10, instructions: P.}\n");
  auto s = b.service(tpl.string());
  ASSERT_FALSE(s.call("workflow_start", json::object()).is_error);
  const std::string big(15u << 20, 'o');
  int saved = 0;
  for (int i = 0; i < 5; ++i) {
    auto o = s.call("workflow_advance", {{"output", big}});
    if (o.is_error) {
      EXPECT_NE(o.text.find("not saved: the workflow state would be"), std::string::npos)
          << o.text.substr(0, 300);
      break;
    }
    ++saved;
  }
  EXPECT_EQ(saved, 4);
  EXPECT_LE(fs::file_size(b.worktree / "workflow-state.json"), kMaxStateBytes);
  auto fresh = b.service(tpl.string());
  auto st = fresh.call("workflow_status", json::object());
  ASSERT_FALSE(st.is_error) << st.text.substr(0, 300);
  EXPECT_EQ(json::parse(st.text)["ralphIteration"], 5);
  // The server that refused answers from the file, not from the state it could not save.
  EXPECT_EQ(json::parse(s.call("workflow_status", json::object()).text)["ralphIteration"], 5);
}

// A new state file gets 0666 less the umask (as Lanes's writeFile); an existing one keeps its mode.
TEST(WorkflowService, TheStateFileFollowsTheUmaskAndKeepsItsMode) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  const mode_t old = ::umask(077);
  auto s = b.service(tpl.string());
  const bool started = !s.call("workflow_start", json::object()).is_error;
  ::umask(old);
  ASSERT_TRUE(started);
  struct stat st {};
  ASSERT_EQ(::stat((b.worktree / "workflow-state.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::chmod((b.worktree / "workflow-state.json").c_str(), 0640), 0);
  ASSERT_FALSE(s.call("workflow_advance", {{"output", "planned"}}).is_error);
  ASSERT_EQ(::stat((b.worktree / "workflow-state.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// A state file that is a link is neither followed nor replaced: it stays a link, its target is
// untouched, and every call says so in one line.
TEST(WorkflowService, ASymlinkedStateFileIsRefusedAndLeftALink) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  {
    auto elsewhere = b.service(tpl.string());
    ASSERT_FALSE(elsewhere.call("workflow_start", json::object()).is_error);
  }
  fs::rename(b.worktree / "workflow-state.json", b.tmp.path() / "target.json");
  fs::create_symlink(b.tmp.path() / "target.json", b.worktree / "workflow-state.json");
  const std::string target = test::read_file(b.tmp.path() / "target.json");
  auto s = b.service(tpl.string());
  for (const char* tool : {"workflow_status", "workflow_advance", "workflow_start"}) {
    auto o = s.call(tool, {{"output", "x"}});
    EXPECT_TRUE(o.is_error) << tool << ": " << o.text;
    EXPECT_NE(o.text.find("is a symbolic link"), std::string::npos) << o.text;
  }
  EXPECT_TRUE(fs::is_symlink(b.worktree / "workflow-state.json"));
  EXPECT_EQ(test::read_file(b.tmp.path() / "target.json"), target);
  // A dangling link is not "no state" either: starting would replace it.
  fs::remove(b.tmp.path() / "target.json");
  EXPECT_TRUE(s.call("workflow_start", json::object()).is_error);
  EXPECT_TRUE(fs::is_symlink(b.worktree / "workflow-state.json"));
}

// Two servers on one worktree, advancing at the same time: every advance answered as a success
// is in the state (the state's lock orders them; none saves over another's).
TEST(WorkflowService, TwoServersAdvancingAtOnceLoseNothing) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml",
                               "name: r\ndescription: d\nsteps:\n  - {id: polish, type: ralph, n: "
                               "1000, instructions: P.}\n");
  {
    auto s = b.service(tpl.string());
    ASSERT_FALSE(s.call("workflow_start", json::object()).is_error);
  }
  constexpr int kEach = 100;
  std::atomic<int> ok{0};
  auto work = [&](const std::string& who) {
    auto s = b.service(tpl.string());
    for (int i = 0; i < kEach; ++i)
      if (!s.call("workflow_advance", {{"output", who + std::to_string(i)}}).is_error) ++ok;
  };
  std::thread t1(work, "a"), t2(work, "b");
  t1.join();
  t2.join();
  EXPECT_EQ(ok.load(), 2 * kEach);
  auto st = json::parse(b.service(tpl.string()).call("workflow_status", json::object()).text);
  EXPECT_EQ(st["ralphIteration"], 2 * kEach + 1);
}

TEST(WorkflowService, WithoutAConfiguredWorkflowStartTakesOneByName) {
  Bench b;
  const fs::path low = b.tmp.path() / "share", high = b.tmp.path() / "proj";
  b.tmp.write("share/ex.yaml", kCompactExample);
  b.tmp.write("proj/ex.yaml",
              std::string(kCompactExample)
                  .replace(std::string(kCompactExample).find("Plan."), 5, "Project plan."));
  b.tmp.write("share/other.yml",
              "name: Other Flow\ndescription: O\nsteps:\n  - id: o\n    type: action\n    "
              "instructions: O.\n");
  b.tmp.write("share/broken.yaml", "name: b\n");
  auto s = b.service("", {low, high});
  auto none = s.call("workflow_start", json::object());
  EXPECT_TRUE(none.is_error);
  EXPECT_NE(none.text.find("No workflow to start"), std::string::npos);
  auto list = json::parse(s.call("workflow_list", json::object()).text);
  ASSERT_EQ(list["workflows"].size(), 3u);
  EXPECT_EQ(list["workflows"][0]["name"], "broken");
  EXPECT_TRUE(list["workflows"][0].contains("error"));
  EXPECT_EQ(list["workflows"][1]["path"], (high / "ex.yaml").string());  // the project's copy wins
  auto st = json::parse(s.call("workflow_start", {{"workflow", "ex"}, {"summary", "try it"}}).text);
  EXPECT_EQ(st["instructions"].get<std::string>().rfind("Project plan.", 0), 0u);
  EXPECT_NE(b.state().find("\"summary\": \"try it\""), std::string::npos);
  // Running: a second start resumes, whatever it names.
  EXPECT_EQ(json::parse(s.call("workflow_start", {{"workflow", "other"}}).text)["step"], "plan");
  s.call("workflow_advance", {{"output", "p"}});
  s.call("workflow_status", json::object());
  s.call("workflow_advance", {{"output", "b"}});
  // Complete: naming a workflow starts it (by its `name`, case-insensitively).
  auto other = json::parse(s.call("workflow_start", {{"workflow", "other flow"}}).text);
  EXPECT_EQ(other["step"], "o");
  auto missing = s.call("workflow_start", {{"workflow", "ghost"}});
  EXPECT_FALSE(missing.is_error);  // running again: resumes
}

TEST(WorkflowService, UnknownWorkflowNameListsTheAvailableOnes) {
  Bench b;
  b.tmp.write("share/ex.yaml", kCompactExample);
  auto s = b.service("ghost", {b.tmp.path() / "share"});
  EXPECT_EQ(s.call("workflow_start", json::object()).text,
            R"x({"error":"workflow 'ghost' not found (available: ex)"})x");
}

TEST(WorkflowService, MinPercentSkipsTheActionWhenTheSessionIsSmall) {
  Bench b;
  const auto tpl = b.tmp.write(
      "wf.yaml",
      "name: n\ndescription: d\nsteps:\n  - id: a\n    type: action\n    instructions: A.\n"
      "  - id: b\n    type: action\n    context: compact\n    context_min_percent: 50\n"
      "    instructions: B.\n  - id: c\n    type: action\n    context: clear\n"
      "    context_min_percent: 50\n    instructions: C.\n");
  auto s = b.service(tpl.string());
  s.call("workflow_start", json::object());
  b.percent = 20;
  auto skipped = json::parse(s.call("workflow_advance", {{"output", "a"}}).text);
  EXPECT_EQ(skipped["step"], "b");  // no /compact: the session is at 20%
  EXPECT_NE(b.state().find("\"contextActionExecuted\": true"), std::string::npos);
  b.percent = 70;
  auto action = json::parse(s.call("workflow_advance", {{"output", "b"}}).text);
  EXPECT_EQ(action["contextAction"], "/clear");
}

// How many times the state file is replaced (renamed into place) while `op` runs.
template <typename Op>
int state_writes_during(const fs::path& worktree, Op op) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_GE(::inotify_add_watch(fd, worktree.c_str(), IN_MOVED_TO), 0);
  op();
  int writes = 0;
  alignas(inotify_event) char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      if (e->len > 0 && std::string(e->name) == "workflow-state.json") ++writes;
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  ::close(fd);
  return writes;
}

// A call writes the state once, whatever it changed: the advance and the action the gate hands
// out (marked as handed out) are one save, under the one lock (a save is a rename, most of a
// call's time).
TEST(WorkflowService, AnAdvanceThatHandsOutAnActionWritesTheStateOnce) {
  Bench b;
  const auto tpl = b.tmp.write("wf.yaml", kCompactExample);
  auto s = b.service(tpl.string());
  EXPECT_EQ(state_writes_during(b.worktree, [&] { s.call("workflow_start", json::object()); }), 1);
  int writes = state_writes_during(b.worktree, [&] {
    auto a = json::parse(s.call("workflow_advance", {{"output", "planned"}}).text);
    EXPECT_EQ(a["contextAction"], "/compact");
  });
  EXPECT_EQ(writes, 1);
  EXPECT_NE(b.state().find("\"contextActionExecuted\": true"), std::string::npos);
  EXPECT_NE(b.state().find("planned"), std::string::npos);
  // A restarted server finds what the call answered.
  auto again = b.service(tpl.string());
  auto st = json::parse(again.call("workflow_status", json::object()).text);
  EXPECT_EQ(st["step"], "build") << st.dump();
}

TEST(WorkflowService, CompactFocusFromTheTemplateIsAddedToTheAnswer) {
  Bench b;
  const auto tpl = b.tmp.write(
      "wf.yaml",
      "name: n\ndescription: d\nsteps:\n  - id: a\n    type: action\n    context: compact\n"
      "    compact_focus: keep the API notes\n    instructions: A.\n");
  auto s = b.service(tpl.string());
  auto o = json::parse(s.call("workflow_start", json::object()).text);
  EXPECT_EQ(o["contextAction"], "/compact");
  EXPECT_EQ(o["focus"], "keep the API notes");
}

TEST(WorkflowService, ToolsListLanesToolsPlusWorkflowList) {
  const json tools = WorkflowService::tools();
  std::vector<std::string> names;
  for (const auto& t : tools) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object");
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"workflow_start", "workflow_set_tasks", "workflow_status",
                                      "workflow_advance", "workflow_context", "workflow_list"}));
  EXPECT_EQ(tools[1]["inputSchema"]["required"], json({"loop_id", "tasks"}));
  EXPECT_TRUE(tools[0]["inputSchema"]["properties"].contains("workflow"));
}

}  // namespace
}  // namespace ctxkit::workflow
