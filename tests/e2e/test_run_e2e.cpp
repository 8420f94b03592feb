#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// A stand-in `claude`: records each call (how it picks its session, whether it got an anchor,
// the prompt's first line, its cwd and stdin) as one line of $STANDIN_LOG, and answers in
// stream-json with the next line of $STANDIN_REPLIES (DONE, NONE, BLOCKED <why>, FAIL, SLEEP,
// HANG (its pid in hang-pid, then 30 s), STOP, PAUSE; DONE when the file has run out). `/compact` calls answer as the real client does
// and use no reply (with $STANDIN_COMPACT_REFUSED set, as it does on a session too short to
// compact). Every answer reports usage input 10, cache creation 100, cache read 1000, output 5 (a
// compaction: 100/0/0/20 through modelUsage). $STANDIN_AFTER_RESULT, when set, is run by sh after
// the result is printed, before the stand-in exits (as the real client's exit takes 40-50 ms),
// with the call's number as $1; the time just before the result went out is then in result-<n>.
constexpr const char* kStandin = R"SH(#!/bin/sh
kind=""; sid=""; anchor=0; prev=""; last=""
for a in "$@"; do
  case "$prev" in
    --session-id) kind=fresh; sid="$a";;
    --resume) kind=resume; sid="$a";;
    --append-system-prompt) anchor=1; printf '%s' "$a" > "$STANDIN_DIR/anchor-$sid-$(date +%s%N)";;
  esac
  prev="$a"; last="$a"
done
stdin=$(cat | head -c 100)
case "$last" in
  /compact*)
    printf 'call=compact sid=%s anchor=%s focus=%s\n' "$sid" "$anchor" "$(printf '%s' "$last" | head -1)" >> "$STANDIN_LOG"
    printf '{"type":"system","subtype":"init","session_id":"%s"}\n' "$sid"
    if [ -n "$STANDIN_COMPACT_REFUSED" ]; then
      printf '{"type":"result","subtype":"success","is_error":false,"result":"Not enough messages to compact.","session_id":"%s","usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{}}\n' "$sid"
      exit 0
    fi
    printf '{"type":"system","subtype":"compact_boundary","session_id":"%s"}\n' "$sid"
    printf '{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"%s","usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{"m":{"inputTokens":100,"outputTokens":20,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}}}\n' "$sid"
    exit 0;;
esac
n=$(cat "$STANDIN_DIR/count" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$STANDIN_DIR/count"
reply=$(sed -n "${n}p" "$STANDIN_REPLIES" 2>/dev/null); [ -n "$reply" ] || reply=DONE
printf 'call=%s sid=%s anchor=%s cwd=%s stdin=%s prompt=%s\n' "$kind" "$sid" "$anchor" "$(pwd)" "$stdin" "$(printf '%s' "$last" | head -1)" >> "$STANDIN_LOG"
printf '%s' "$last" > "$STANDIN_DIR/prompt-$n"
case "$reply" in
  FAIL) echo "stand-in failure" >&2; exit 1;;
  SLEEP) sleep 2; text='Slept.\nCTXKIT-TASK: DONE';;
  HANG) echo $$ > "$STANDIN_DIR/hang-pid"; exec sleep 30;;
  STOP) for d in .ctxkit/runs/*/; do touch "$d/STOP"; done; text='Stopping.\nCTXKIT-TASK: DONE';;
  PAUSE) for d in .ctxkit/runs/*/; do touch "$d/PAUSE"; done; text='Pausing.\nCTXKIT-TASK: DONE';;
  DONE) text='Worked on it.\nDecision: keep it simple\nCTXKIT-TASK: DONE';;
  NONE) text='Still working on it.';;
  BLOCKED*) text="Cannot.\\nCTXKIT-TASK: ${reply}";;
esac
printf '{"type":"system","subtype":"init","session_id":"%s"}\n' "$sid"
printf '{"type":"user","message":{"role":"user","content":"big tool output"}}\n'
[ -z "$STANDIN_AFTER_RESULT" ] || date +%s%N > "$STANDIN_DIR/result-$n"
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5},"modelUsage":{"m":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":1000,"cacheCreationInputTokens":100}}}\n' "$text" "$sid"
[ -z "$STANDIN_AFTER_RESULT" ] || sh -c "$STANDIN_AFTER_RESULT" standin "$n"
)SH";

struct Call {
  std::string kind, sid;
  bool anchor = false;
  std::string rest;
};

struct RunRig {
  TempDir tmp;
  fs::path project, bin, standin_dir;
  util::Env env;
  RunRig() {
    project = tmp / "proj";
    bin = tmp / "bin";
    standin_dir = tmp / "standin";
    fs::create_directories(project);
    fs::create_directories(bin);
    fs::create_directories(standin_dir);
    std::ofstream(bin / "claude") << kStandin;
    fs::permissions(bin / "claude", fs::perms::owner_all);
    env = tmp.env();
    env.set("PATH", bin.string() + ":/usr/bin:/bin");
    env.set("STANDIN_LOG", (standin_dir / "log").string());
    env.set("STANDIN_DIR", standin_dir.string());
    env.set("STANDIN_REPLIES", (standin_dir / "replies").string());
    tmp.write("proj/tasks.yaml",
              "- id: t1\n  title: Write the parser\n  description: Parse the input.\n  acceptance: [parses the sample]\n"
              "- id: t2\n  title: Write the printer\n"
              "- id: t3\n  title: Wire them together\n  depends_on: [t1, t2]\n");
  }
  void replies(const std::string& lines) const { std::ofstream(standin_dir / "replies") << lines; }
  std::vector<Call> calls() const {
    std::vector<Call> out;
    std::ifstream in(standin_dir / "log");
    std::string line;
    while (std::getline(in, line)) {
      Call c;
      std::istringstream ss(line);
      std::string tok;
      ss >> tok;
      c.kind = tok.substr(5);
      ss >> tok;
      c.sid = tok.substr(4);
      ss >> tok;
      c.anchor = tok == "anchor=1";
      std::getline(ss, c.rest);
      out.push_back(c);
    }
    return out;
  }
  util::ProcessResult run(const std::vector<std::string>& args) const { return run_tool("ctx-run", args, "", env, project); }
  std::vector<fs::path> runs() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(project / ".ctxkit" / "runs", ec)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  json run_json(const fs::path& folder) const { return json::parse(read_file(folder / "run.json")); }
  json report(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args{"report", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string prompt(int n) const { return read_file(standin_dir / ("prompt-" + std::to_string(n))); }
  // The anchors the stand-in got for session `sid`, one a call, oldest first.
  std::vector<std::string> anchors_of(const std::string& sid) const {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(standin_dir))
      if (e.path().filename().string().starts_with("anchor-" + sid)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(read_file(f));
    return out;
  }
  // The first anchor of session `sid` (empty when it got none).
  std::string anchor_of(const std::string& sid) const {
    auto all = anchors_of(sid);
    return all.empty() ? std::string() : all.front();
  }
  // Makes the project a git repository on branch main with one empty commit.
  void init_repo() const {
    const std::string git = "git -C '" + project.string() + "' -c user.name=t -c user.email=t@localhost ";
    ASSERT_EQ(std::system((git + "init -q -b main && " + git + "commit -q --allow-empty -m start").c_str()), 0);
  }
};

// Each task takes two iterations: the first ends without the done marker.
constexpr const char* kTwoEach = "NONE\nDONE\nNONE\nDONE\nNONE\nDONE\n";

std::vector<std::string> kinds(const std::vector<Call>& calls) {
  std::vector<std::string> out;
  for (const auto& c : calls) out.push_back(c.kind);
  return out;
}

TEST(RunE2E, ContinuousUsesOneSessionForTheWholeRun) {
  RunRig r;
  r.replies(kTwoEach);
  auto res = r.run({"tasks.yaml", "--context-mode", "continuous"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume", "resume", "resume", "resume", "resume"}));
  for (const auto& c : calls) EXPECT_EQ(c.sid, calls[0].sid);
  EXPECT_EQ(calls[0].sid.size(), 36u);
  // The prompt goes as an argument; nothing on stdin; the client runs in the project.
  EXPECT_NE(calls[0].rest.find("cwd=" + r.project.string() + " stdin= prompt=Task t1: Write the parser"), std::string::npos) << calls[0].rest;
  // Dependencies order the tasks: t3 last.
  EXPECT_NE(calls[4].rest.find("prompt=Task t3"), std::string::npos);
  // The second attempt of a task says so.
  EXPECT_NE(r.prompt(2).find("This is attempt 2 of at most 3"), std::string::npos);
  EXPECT_NE(r.prompt(1).find("CTXKIT-TASK: DONE"), std::string::npos);
  const json rep = r.report();
  EXPECT_EQ(rep["mode"], "continuous");
  EXPECT_EQ(rep["status"], "completed");
  EXPECT_EQ(rep["totals"]["iterations"], 6);
  EXPECT_EQ(rep["totals"]["resets"], 0);
  EXPECT_EQ(rep["totals"]["usage"]["input"], 60);
  EXPECT_EQ(rep["totals"]["usage"]["cache_creation"], 600);
  EXPECT_EQ(rep["totals"]["usage"]["cache_read"], 6000);
  EXPECT_EQ(rep["totals"]["usage"]["output"], 30);
  for (const auto& t : rep["tasks"]) {
    EXPECT_EQ(t["status"], "done");
    EXPECT_EQ(t["iterations"], 2);
  }
}

TEST(RunE2E, FreshPerTaskStartsASessionPerTaskAndResumesItsIterations) {
  RunRig r;
  r.replies(kTwoEach);
  auto res = r.run({"tasks.yaml", "--fresh-context"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume", "fresh", "resume", "fresh", "resume"}));
  EXPECT_EQ(calls[1].sid, calls[0].sid);
  EXPECT_EQ(calls[3].sid, calls[2].sid);
  EXPECT_NE(calls[2].sid, calls[0].sid);
  EXPECT_NE(calls[4].sid, calls[2].sid);
  // Every call of a session carries the same anchor, byte for byte (the prompt cache holds).
  for (const auto& c : calls) EXPECT_TRUE(c.anchor);
  const std::vector<std::string> anchors_of_first = r.anchors_of(calls[0].sid);
  ASSERT_EQ(anchors_of_first.size(), 2u);
  EXPECT_EQ(anchors_of_first[0], anchors_of_first[1]);
  EXPECT_NE(anchors_of_first[0].find("Task t1: Write the parser\nParse the input.\nAcceptance criteria:\n- [ ] parses the sample"),
            std::string::npos);
  const json rep = r.report();
  EXPECT_EQ(rep["mode"], "fresh-per-task");
  EXPECT_EQ(rep["totals"]["resets"], 2);
  // Summaries are hybrid's alone.
  EXPECT_FALSE(fs::exists(r.runs().at(0) / "task_summary.md"));
  EXPECT_GT(rep["totals"]["anchoring_tokens"].get<int>(), 0);
}

TEST(RunE2E, FreshPerIterationStartsASessionForEveryCall) {
  RunRig r;
  r.replies(kTwoEach);
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  std::set<std::string> sids;
  for (const auto& c : calls) {
    EXPECT_EQ(c.kind, "fresh");
    sids.insert(c.sid);
  }
  EXPECT_EQ(sids.size(), 6u);
  EXPECT_EQ(r.report()["totals"]["resets"], 5);
}

TEST(RunE2E, HybridCarriesThePreviousTasksSummary) {
  RunRig r;
  r.replies(kTwoEach);
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  auto res = r.run({"tasks.yaml", "--context-mode", "hybrid"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume", "fresh", "resume", "fresh", "resume"}));
  const std::string second_anchor = r.anchor_of(calls[2].sid);
  EXPECT_NE(second_anchor.find("Project rules: small commits."), std::string::npos);
  EXPECT_NE(second_anchor.find("## Previous task summary\nTask t1: Write the parser\nStatus: done"), std::string::npos) << second_anchor;
  EXPECT_NE(second_anchor.find("- keep it simple"), std::string::npos);
  const auto run = r.runs().at(0);
  EXPECT_NE(read_file(run / "task_summary.md").find("Task t3: Wire them together"), std::string::npos);
  // Events: JSONL in the run folder, the same rows in the state database.
  const std::string events = read_file(run / "events.jsonl");
  EXPECT_NE(events.find(R"("event":"task_completed","run_id")"), std::string::npos);
  EXPECT_NE(events.find(R"("context_mode":"hybrid","task_id":"t1","iterations":2,"tokens_used":2230)"), std::string::npos) << events;
  auto store = StateStore::open(r.tmp / "home/.local/state/ctxkit/state.db", 1000);
  ASSERT_TRUE(store) << store.error().message;
  auto rows = store->events("run", run.filename().string());
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), static_cast<size_t>(line_count(events)));
  EXPECT_EQ(rows->front().kind, "run_started");
  EXPECT_EQ(rows->back().kind, "run_ended");
}

TEST(RunE2E, ReportComparesRunsSideBySide) {
  RunRig r;
  r.replies("");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "continuous"}).exit_code, 0);
  fs::remove(r.standin_dir / "count");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"}).exit_code, 0);
  auto text = r.run({"report", "--all"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("side by side:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("continuous"), std::string::npos);
  EXPECT_NE(text.out.find("fresh-per-iteration"), std::string::npos);
  const json both = r.report({"--all"});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0]["totals"]["iterations"], 3);
  EXPECT_EQ(both[1]["totals"]["resets"], 2);
}

TEST(RunE2E, BlockedTaskAbortsByDefaultAndSkipGoesOn) {
  RunRig r;
  r.replies("BLOCKED no compiler\n");
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(r.calls().size(), 1u);
  EXPECT_NE(res.err.find("blocked: no compiler"), std::string::npos) << res.err;
  fs::remove(r.standin_dir / "count");
  fs::remove(r.standin_dir / "log");
  auto skip = r.run({"tasks.yaml", "--on-fail", "skip"});
  EXPECT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(r.calls().size(), 3u);
  const json rep = r.report();
  EXPECT_EQ(rep["tasks"][0]["status"], "skipped");
  EXPECT_EQ(rep["tasks"][1]["status"], "done");
}

TEST(RunE2E, ATaskNeverReportedDoneStopsAtMaxTaskIterations) {
  RunRig r;
  r.replies("NONE\nNONE\nFAIL\n");
  auto res = r.run({"tasks.yaml", "--max-task-iterations", "3"});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_EQ(r.calls().size(), 3u);
  EXPECT_NE(res.err.find("the call failed (exit 1)"), std::string::npos) << res.err;
  // max_iterations bounds the whole run.
  RunRig r2;
  r2.replies("NONE\nNONE\nNONE\nNONE\n");
  auto limited = r2.run({"tasks.yaml", "--max-iterations", "2"});
  EXPECT_EQ(limited.exit_code, 3);
  EXPECT_EQ(r2.calls().size(), 2u);
  EXPECT_NE(limited.out.find("max_iterations reached"), std::string::npos) << limited.out;
}

TEST(RunE2E, ARunWhoseLastTaskEndsOnTheLastAllowedIterationIsComplete) {
  RunRig r;  // three tasks, each done at its first call
  auto res = r.run({"tasks.yaml", "--max-iterations", "3"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);
  EXPECT_EQ(r.run_json(r.runs().at(0))["status"], "completed");
  EXPECT_EQ(res.out.find("max_iterations reached"), std::string::npos) << res.out;
}

TEST(RunE2E, TaskSummariesListTheProjectsFilesNotTheRunsOwnRecords) {
  RunRig r;
  r.init_repo();
  r.tmp.write("proj/src/parser.cpp", "int main() {}\n");
  auto res = r.run({"tasks.yaml", "--context-mode", "hybrid"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::string summary = read_file(r.runs().at(0) / "tasks" / "t2" / "summary.md");
  EXPECT_NE(summary.find("- src/\n"), std::string::npos) << summary;  // a new folder, once
  EXPECT_EQ(summary.find(".ctxkit/runs"), std::string::npos) << summary;
}

// A git wrapper in front of the real one that logs when each call starts (git-log in the
// stand-in's folder: "<ns> <args>").
void log_git(const RunRig& r) {
  std::ofstream(r.bin / "git") << "#!/bin/sh\nprintf '%s %s\\n' \"$(date +%s%N)\" \"$*\" >> \"$STANDIN_DIR/git-log\"\nexec /usr/bin/git \"$@\"\n";
  fs::permissions(r.bin / "git", fs::perms::owner_all);
}

std::vector<long long> git_status_starts(const RunRig& r) {
  std::vector<long long> out;
  std::istringstream log(read_file(r.standin_dir / "git-log"));
  for (std::string line; std::getline(log, line);)
    if (line.find(" status ") != std::string::npos) out.push_back(std::stoll(line.substr(0, line.find(' '))));
  return out;
}

// The next fresh session's git state is asked for as soon as the client prints its result, while
// it is still exiting: a git wrapper logs when each `status` starts, the stand-in when it printed
// its result and when it exited.
TEST(RunE2E, GitIsAskedWhileTheClientIsStillExiting) {
  RunRig r;
  r.init_repo();
  log_git(r);
  r.env.set("STANDIN_AFTER_RESULT", "sleep 1; date +%s%N > \"$STANDIN_DIR/exited-$1\"");
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  const std::vector<long long> status_starts = git_status_starts(r);
  for (int n : {1, 2}) {
    const long long result = std::stoll(read_file(r.standin_dir / ("result-" + std::to_string(n))));
    const long long exited = std::stoll(read_file(r.standin_dir / ("exited-" + std::to_string(n))));
    EXPECT_EQ(std::count_if(status_starts.begin(), status_starts.end(), [&](long long t) { return t >= result && t < exited; }), 1)
        << "call " << n << ": no git status between its result and its exit\n" << read_file(r.standin_dir / "git-log");
    // tasks.yaml is not committed.
    EXPECT_NE(r.anchor_of(calls[static_cast<size_t>(n)].sid).find("## Git state (when this session started)\nBranch: main\nUncommitted files: 1\n"),
              std::string::npos) << r.anchor_of(calls[static_cast<size_t>(n)].sid);
  }
  // Nothing asked twice: one status before the first call, then one after each call's result
  // (the last one's is not needed, but the runner cannot know that before it reads the answer).
  EXPECT_EQ(status_starts.size(), 4u) << read_file(r.standin_dir / "git-log");
}

// What git was asked ahead is not used once the repository has moved: a commit made after the
// result (by a SessionEnd hook, say) is in the next session's anchor.
TEST(RunE2E, ACommitAfterTheResultIsInTheNextAnchor) {
  RunRig r;
  r.init_repo();
  log_git(r);
  r.env.set("STANDIN_AFTER_RESULT", "sleep 0.3; git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m \"after result $1\"");
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_NE(r.anchor_of(calls[1].sid).find("Last commits:\n"), std::string::npos);
  EXPECT_NE(r.anchor_of(calls[1].sid).find(" after result 1\n"), std::string::npos) << r.anchor_of(calls[1].sid);
  EXPECT_NE(r.anchor_of(calls[2].sid).find(" after result 2\n"), std::string::npos) << r.anchor_of(calls[2].sid);
  // Asked ahead and refused: one status before the first call, then for each of the first two
  // calls the one at its result and the one asked again after the commit, and the last call's.
  EXPECT_EQ(git_status_starts(r).size(), 6u) << read_file(r.standin_dir / "git-log");
}

constexpr const char* kTemplate =
    "name: ship\ndescription: plan, build, review\nsteps:\n"
    "  - id: plan\n    type: action\n    instructions: Write the plan.\n"
    "  - id: build\n    type: action\n    context: clear\n    instructions: Build what the plan says.\n"
    "  - id: review\n    type: action\n    context: compact\n    compact_focus: the review of the build\n    instructions: Review the build.\n";

TEST(RunE2E, WorkflowClearIsAFreshSessionAndCompactRunsSlashCompact) {
  RunRig r;
  r.tmp.write("proj/.ctxkit/workflows/ship.yaml", kTemplate);
  auto res = r.run({"--workflow", "ship", "--summary", "ship it"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "compact", "resume"}));
  EXPECT_NE(calls[0].rest.find("prompt=Workflow \"ship\", step plan"), std::string::npos) << calls[0].rest;
  EXPECT_NE(calls[1].sid, calls[0].sid);          // /clear: a new session
  EXPECT_EQ(calls[2].sid, calls[1].sid);          // /compact on the session of the step before
  EXPECT_NE(calls[2].rest.find("focus=/compact the review of the build"), std::string::npos) << calls[2].rest;
  EXPECT_EQ(calls[3].sid, calls[1].sid);
  // The workflow advanced with the agent's final messages.
  const json state = json::parse(read_file(r.project / "workflow-state.json"));
  EXPECT_EQ(state["status"], "complete");
  EXPECT_EQ(state["outputs"]["plan"], "Worked on it.\nDecision: keep it simple");
  const json rep = r.report();
  EXPECT_EQ(rep["totals"]["resets"], 1);
  EXPECT_EQ(rep["totals"]["compactions"], 1);
  EXPECT_EQ(rep["totals"]["usage"]["input"], 130);  // three calls and the compaction
  const std::string events = read_file(r.runs().at(0) / "events.jsonl");
  EXPECT_NE(events.find(R"("event":"context_reset")"), std::string::npos);
  EXPECT_NE(events.find(R"("why":"workflow clear")"), std::string::npos);
  EXPECT_NE(events.find(R"("event":"compacted")"), std::string::npos);
}

TEST(RunE2E, ACompactionTheClientRefusesIsNotCountedAndTheSessionKeepsItsAnchor) {
  RunRig r;
  r.tmp.write("proj/.ctxkit/workflows/ship.yaml", kTemplate);
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  r.env.set("STANDIN_COMPACT_REFUSED", "1");
  auto res = r.run({"--workflow", "ship", "--summary", "ship it"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "compact", "resume"}));
  const json rep = r.report();
  EXPECT_EQ(rep["totals"]["compactions"], 0);
  const std::string events = read_file(r.runs().at(0) / "events.jsonl");
  EXPECT_EQ(events.find(R"("event":"compacted")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("event":"compact_failed")"), std::string::npos) << events;
  EXPECT_NE(events.find("Not enough messages to compact."), std::string::npos);
  // The review resumes the build's session with the anchor that session started with.
  const std::vector<std::string> review_anchors = r.anchors_of(calls[1].sid);
  EXPECT_EQ(std::set<std::string>(review_anchors.begin(), review_anchors.end()).size(), 1u);
  EXPECT_FALSE(fs::exists(r.runs().at(0) / "anchors" / "0003.md"));
}

TEST(RunE2E, WorkflowLoopTakesTheTasksFileAndFreshPerTaskFollowsLoopTasks) {
  RunRig r;
  r.tmp.write("proj/.ctxkit/workflows/loopy.yaml",
              "name: loopy\ndescription: d\nsteps:\n  - id: work\n    type: loop\nloops:\n  work:\n"
              "    - id: code\n      instructions: Code {task.title}.\n    - id: test\n      instructions: Test {task.id}.\n");
  r.tmp.write("proj/two.json", R"([{"id":"a","title":"Alpha"},{"id":"b","title":"Beta"}])");
  auto res = r.run({"two.json", "--workflow", "loopy", "--fresh-context"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume", "fresh", "resume"}));
  EXPECT_NE(r.prompt(1).find("Code Alpha."), std::string::npos) << r.prompt(1);
  EXPECT_NE(r.prompt(2).find("Test a."), std::string::npos);
  EXPECT_NE(r.prompt(3).find("Code Beta."), std::string::npos);
}

TEST(RunE2E, StopFileEndsTheRunAndResumeContinuesIt) {
  RunRig r;
  r.replies("STOP\nDONE\nDONE\n");
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.calls().size(), 1u);
  const auto run = r.runs().at(0);
  EXPECT_EQ(r.run_json(run)["status"], "stopped");
  EXPECT_FALSE(fs::exists(run / "STOP"));  // honoured once
  auto again = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  // Continuous: the resumed run goes on in the same session.
  EXPECT_EQ(calls[1].kind, "resume");
  EXPECT_EQ(calls[1].sid, calls[0].sid);
  EXPECT_NE(calls[1].rest.find("prompt=Task t2"), std::string::npos);
  EXPECT_EQ(r.run_json(run)["status"], "completed");
  // A finished run cannot be resumed.
  EXPECT_EQ(r.run({"--resume", run.filename().string()}).exit_code, 1);
}

TEST(RunE2E, PauseFileWaitsUntilItIsRemoved) {
  RunRig r;
  r.replies("PAUSE\n");
  util::SpawnSpec spec;
  spec.argv = {"sh", "-c", "exec \"$0\" tasks.yaml > out.txt 2> err.txt", bin_dir() + "/ctx-run"};
  spec.cwd = r.project;
  spec.env = r.env.vars();
  auto child = util::Child::spawn(spec);
  ASSERT_TRUE(child) << child.error().message;
  fs::path run;
  bool paused = false;
  for (int i = 0; i < 100 && !paused; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto runs = r.runs();
    if (runs.empty() || !fs::exists(runs[0] / "run.json")) continue;
    run = runs[0];
    paused = r.run_json(run)["status"] == "paused";
  }
  ASSERT_TRUE(paused);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(r.calls().size(), 1u);  // nothing runs while paused
  fs::remove(run / "PAUSE");
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 0) << read_file(r.project / "err.txt");
  EXPECT_EQ(r.calls().size(), 3u);
  // The wait (a second and more) is not counted as the runner's work of the next iteration.
  std::istringstream events(read_file(run / "events.jsonl"));
  int iterations = 0;
  for (std::string line; std::getline(events, line);) {
    const json ev = json::parse(line);
    if (ev["event"] != "iteration") continue;
    ++iterations;
    EXPECT_LT(ev["runner_ms"].get<int64_t>(), 900) << line;
  }
  EXPECT_EQ(iterations, 3);
}

bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';  // a zombie
}

// kill -9 in the middle of a call: the client goes too (it would go on working in the project
// beside the next ctx-run); the run is reported as interrupted and --resume goes on from the
// last recorded iteration. While a ctx-run drives a run, a second one may not.
TEST(RunE2E, KilledMidCallTakesTheClientAlongAndResumeGoesOn) {
  RunRig r;
  r.replies("DONE\nHANG\n");
  util::SpawnSpec spec;
  spec.argv = {bin_dir() + "/ctx-run", "tasks.yaml", "--context-mode", "fresh-per-task"};
  spec.cwd = r.project;
  spec.env = r.env.vars();
  auto child = util::Child::spawn(spec);
  ASSERT_TRUE(child) << child.error().message;
  const fs::path pid_file = r.standin_dir / "hang-pid";
  for (int i = 0; i < 200 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(pid_file));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const pid_t client = static_cast<pid_t>(std::stol(read_file(pid_file)));
  const auto run = r.runs().at(0);
  const std::string id = run.filename().string();

  auto second = r.run({"--resume", id});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("is being driven by another ctx-run"), std::string::npos) << second.err;
  EXPECT_EQ(line_count(second.err), 1);

  ASSERT_TRUE(child->signal(SIGKILL));
  child->wait();
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = process_gone(client);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the client " << client << " outlived ctx-run";
  EXPECT_EQ(r.report({id})["status"], "interrupted");

  auto resumed = r.run({"--resume", id});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);  // t1; t2 killed; t2 again, fresh; t3
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "fresh", "fresh"}));
  const json rep = r.report({id});
  EXPECT_EQ(rep["status"], "completed");
  EXPECT_EQ(rep["totals"]["iterations"], 3);
}

TEST(RunE2E, SigintStopsAfterRecordingTheCurrentIteration) {
  RunRig r;
  r.replies("SLEEP\nDONE\nDONE\n");
  util::SpawnSpec spec;
  spec.argv = {bin_dir() + "/ctx-run", "tasks.yaml"};
  spec.cwd = r.project;
  spec.env = r.env.vars();
  auto child = util::Child::spawn(spec);
  ASSERT_TRUE(child);
  for (int i = 0; i < 100 && r.calls().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(r.calls().size(), 1u);
  child->signal(SIGINT);
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 130);
  const auto run = r.runs().at(0);
  const json j = r.run_json(run);
  EXPECT_EQ(j["status"], "stopped");
  EXPECT_EQ(j["iterations"], 1);               // the call in flight was recorded
  EXPECT_EQ(j["tasks"][0]["status"], "done");
  EXPECT_EQ(r.calls().size(), 1u);
  auto again = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(r.calls().size(), 3u);
}

TEST(RunE2E, DryRunPrintsThePlanAndRunsNothing) {
  RunRig r;
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-task", "--dry-run", "--model", "claude-sonnet-4-5"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_TRUE(r.calls().empty());
  EXPECT_FALSE(fs::exists(r.project / ".ctxkit"));
  EXPECT_NE(res.out.find("run plan: mode fresh-per-task"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("argv: claude --model claude-sonnet-4-5 --output-format stream-json --verbose -p --session-id"), std::string::npos)
      << res.out;
  EXPECT_NE(res.out.find("anchor ("), std::string::npos);
  EXPECT_NE(res.out.find("task t3 (Wire them together)"), std::string::npos);
}

TEST(RunE2E, BadInputIsOneLineAndRecordsNothing) {
  RunRig r;
  r.tmp.write("proj/cycle.yaml", "- {id: a, title: A, depends_on: [b]}\n- {id: b, title: B, depends_on: [a]}\n");
  r.tmp.write("proj/broken.json", "[{\"id\": \"a\", \"title\": ");
  r.tmp.write("proj/norun/x", "");
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const Case cases[] = {
      {{"tasks.yaml", "--context-mode", "sometimes"}, "unknown context mode 'sometimes'"},
      {{"broken.json"}, "broken.json"},
      {{"cycle.yaml"}, "cycle"},
      {{"missing.yaml"}, "missing.yaml"},
      {{}, "nothing to run"},
      {{"--resume", "./norun"}, "not a ctxkit run folder"},
      {{"--resume", "nosuchrun"}, "no run at"},
      {{"tasks.yaml", "--anchor-sources", "task,gti"}, "unknown anchor source 'gti'"},
      {{"tasks.yaml", "--workflow", "nonesuch"}, "workflow 'nonesuch' not found"},
  };
  for (const auto& c : cases) {
    auto res = r.run(c.args);
    EXPECT_EQ(res.exit_code, 1) << c.needle << ": " << res.err;
    EXPECT_EQ(line_count(res.err), 1u) << res.err;
    EXPECT_NE(res.err.find(c.needle), std::string::npos) << res.err;
    EXPECT_TRUE(r.runs().empty()) << c.needle;
  }
  fs::create_directories(r.project / ".ctxkit/runs/norun");
  auto not_ours = r.run({"--resume", "norun"});
  EXPECT_EQ(not_ours.exit_code, 1);
  EXPECT_NE(not_ours.err.find("not a ctxkit run folder"), std::string::npos) << not_ours.err;
  // claude not found.
  util::Env env = r.env;
  env.set("PATH", "/usr/bin:/bin");
  auto no_claude = run_tool("ctx-run", {"tasks.yaml"}, "", env, r.project);
  EXPECT_EQ(no_claude.exit_code, 1);
  EXPECT_NE(no_claude.err.find("claude not found"), std::string::npos) << no_claude.err;
  EXPECT_TRUE(r.calls().empty());
}

TEST(RunE2E, ConfigSetEditsOnlyTheModeKey) {
  RunRig r;
  const std::string before = "# my settings\n[context]\nwarn_threshold = 55 # keep\n\n[runner]\nmode = \"continuous\"  # was\nmax_iterations = 9\n";
  r.tmp.write("proj/.work.toml", before);
  auto res = r.run({"config", "set", "runner.mode", "hybrid"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::string after = read_file(r.project / ".work.toml");
  std::string expected = before;
  expected.replace(expected.find("\"continuous\""), 12, "\"hybrid\"");
  EXPECT_EQ(after, expected);
  // And the runner takes it.
  auto plan = r.run({"tasks.yaml", "--dry-run"});
  EXPECT_NE(plan.out.find("mode hybrid (" + (r.project / ".work.toml").string() + ")"), std::string::npos) << plan.out;
  EXPECT_EQ(r.run({"config", "set", "runner.mode", "often"}).exit_code, 1);
  EXPECT_EQ(read_file(r.project / ".work.toml"), expected);
}

// ---- hostile input (issue 23) -------------------------------------------------------------

void write_run_json(const fs::path& run, const json& j) { std::ofstream(run / "run.json") << j.dump(2) << "\n"; }

size_t lines_with(const std::string& text, const std::string& needle) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

// run.json lives in the project, which a cloned repository can ship: what a resumed run executes
// comes from the user's configuration and command line, never from the folder.
TEST(RunE2E, ResumeRunsTheUsersClientNotTheOneRunJsonNames) {
  RunRig r;
  r.replies("STOP\nDONE\nDONE\n");
  ASSERT_EQ(r.run({"tasks.yaml"}).exit_code, 3);
  const auto run = r.runs().at(0);
  json j = r.run_json(run);
  const fs::path pwned = r.tmp / "pwned";
  j["options"]["claude_bin"] = "/bin/sh";
  j["options"]["claude_args"] = {"-c", "touch '" + pwned.string() + "'"};
  write_run_json(run, j);
  auto res = r.run({"--resume", run.filename().string()});
  EXPECT_FALSE(fs::exists(pwned)) << "run.json's program was run";
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);  // the user's claude (the stand-in on PATH) did the work
  EXPECT_EQ(lines_with(res.err, "records claude_bin \"/bin/sh\" and claude_args [\"-c\","), 1u) << res.err;
  EXPECT_EQ(lines_with(res.err, "they are ignored: this run uses \"claude\" and []"), 1u) << res.err;
  EXPECT_EQ(r.run_json(run)["options"]["claude_bin"], "claude");  // what ran is what is recorded
}

// A session id the client would read as an option (`--resume` takes an optional value).
TEST(RunE2E, ResumeRefusesASessionIdThatIsNotOne) {
  RunRig r;
  r.replies("STOP\nDONE\nDONE\n");
  ASSERT_EQ(r.run({"tasks.yaml"}).exit_code, 3);  // continuous: the next calls resume the session
  const auto run = r.runs().at(0);
  json j = r.run_json(run);
  j["session"]["id"] = "--dangerously-skip-permissions";
  write_run_json(run, j);
  auto bad = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
  EXPECT_NE(bad.err.find("the session id \"--dangerously-skip-permissions\" is not a session id"), std::string::npos) << bad.err;
  EXPECT_EQ(r.calls().size(), 1u);
}

// A session anchor outside the run folder is not read into the client's system prompt.
TEST(RunE2E, ResumeReadsNoAnchorOutsideTheRunFolder) {
  RunRig r;
  r.replies("STOP\nDONE\nDONE\n");
  ASSERT_EQ(r.run({"tasks.yaml"}).exit_code, 3);  // continuous: the next calls resume the session
  const auto run = r.runs().at(0);
  r.tmp.write("secret.txt", "TOP SECRET\n");
  json j = r.run_json(run);
  j["session"]["anchor_file"] = "../../../../secret.txt";
  write_run_json(run, j);
  auto res = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  ASSERT_EQ(r.calls().size(), 3u);
  for (const auto& e : fs::directory_iterator(r.standin_dir))
    EXPECT_EQ(read_file(e.path()).find("TOP SECRET"), std::string::npos) << e.path();
}

// A 500-byte tasks file whose aliases expand to 10^8 nodes: one line, nothing recorded.
TEST(RunE2E, AnAliasBombTasksFileIsRefusedInOneLine) {
  RunRig r;
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  r.tmp.write("proj/bomb.yaml", y + "tasks:\n  - {id: a, title: A}\n");
  r.tmp.write("proj/loop.yaml", "tasks: &a [ *a ]\n");
  for (const char* file : {"bomb.yaml", "loop.yaml"}) {
    auto res = r.run({file});
    EXPECT_EQ(res.exit_code, 1) << file << ": " << res.err;
    EXPECT_EQ(line_count(res.err), 1u) << res.err;
    EXPECT_NE(res.err.find(std::string(file) + ":"), std::string::npos) << res.err;
    EXPECT_TRUE(r.runs().empty());
  }
  EXPECT_TRUE(r.calls().empty());
}

// A NUL would end the argument exec hands the client: the client would get the task without its
// description and rules while the run folder recorded all of it.
TEST(RunE2E, ATasksFileWithANulIsRefusedInOneLine) {
  RunRig r;
  r.tmp.write("proj/nul.json", R"([{"id": "a", "title": "A", "description": "before\u0000after"}])");
  auto refused = r.run({"nul.json"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(line_count(refused.err), 1u) << refused.err;
  EXPECT_NE(refused.err.find("task 1 ('a'): description contains a NUL character"), std::string::npos) << refused.err;
  EXPECT_TRUE(r.runs().empty());
  EXPECT_TRUE(r.calls().empty());
}

// PROMPT.md is read for every fresh session: its NUL is passed as U+FFFD, nothing is cut.
TEST(RunE2E, ANulInPromptMdReachesTheClientUncut) {
  RunRig r;
  const char prompt_md[] = "Rules before.\0Rules after the NUL.\n";
  r.tmp.write("proj/PROMPT.md", std::string(prompt_md, sizeof prompt_md - 1));
  auto res = r.run({"tasks.yaml", "--fresh-context"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  const std::string anchor = r.anchor_of(calls[0].sid);
  EXPECT_NE(anchor.find("Rules before.\xEF\xBF\xBDRules after the NUL."), std::string::npos) << anchor;
  EXPECT_NE(anchor.find("## Current task"), std::string::npos) << anchor;
  EXPECT_NE(r.prompt(1).find("CTXKIT-TASK: DONE"), std::string::npos);
  // What the run folder recorded is what the client got.
  EXPECT_EQ(read_file(r.runs().at(0) / "anchors" / "0001.md"), anchor);
}

// From a project's .work.toml, anchor_files and progress_file name only files inside the project
// (links followed); the user's own configuration may name any file.
TEST(RunE2E, AProjectsWorkTomlReadsNoFileOutsideTheProject) {
  RunRig r;
  const fs::path secret = r.tmp.write("secret.txt", "TOP SECRET\n");
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  r.tmp.write("proj/.work.toml", "[runner]\nanchor_files = [\"" + secret.string() + "\", \"NOTES.md\"]\nprogress_file = \"../secret.txt\"\n");
  r.tmp.write("proj/NOTES.md", "notes\n");
  fs::create_symlink(secret, r.project / "AGENT.md");  // a default file that leads out
  auto res = r.run({"tasks.yaml", "--context-mode", "hybrid"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(lines_with(res.err, "outside the project: ignored in a project file"), 2u) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);
  for (const auto& e : fs::directory_iterator(r.standin_dir))
    EXPECT_EQ(read_file(e.path()).find("TOP SECRET"), std::string::npos) << e.path();
  for (const auto& e : fs::recursive_directory_iterator(r.runs().at(0))) {
    if (e.is_regular_file()) {
      EXPECT_EQ(read_file(e.path()).find("TOP SECRET"), std::string::npos) << e.path();
    }
  }
  // The same file named in the user's own config.toml is theirs to give.
  r.tmp.write("home/.config/ctxkit/config.toml", "[runner]\nanchor_files = [\"" + secret.string() + "\"]\n");
  fs::remove(r.project / ".work.toml");
  auto mine = r.run({"tasks.yaml", "--context-mode", "fresh-per-task"});
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_NE(r.anchor_of(r.calls().at(3).sid).find("TOP SECRET"), std::string::npos);
}

// The model's BLOCKED reason reaches the terminal only with its control characters escaped.
TEST(RunE2E, EscapeSequencesFromTheModelDoNotReachTheTerminal) {
  RunRig r;
  r.replies("BLOCKED \\u001b]0;pwned\\u0007\\u001b[2Jgone\n");
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.err.find('\x1b'), std::string::npos) << res.err;
  EXPECT_EQ(res.out.find('\x1b'), std::string::npos) << res.out;
  EXPECT_EQ(res.err.find('\x07'), std::string::npos);
  EXPECT_NE(res.err.find("\\x1b]0;pwned\\x07\\x1b[2Jgone"), std::string::npos) << res.err;
}

// A STOP that is not a file cannot be consumed: it is not a request (else every --resume would
// stop at once), and it is named once.
TEST(RunE2E, AStopThatIsADirectoryIsNotARequest) {
  RunRig r;
  r.replies("STOP\nDONE\nDONE\n");
  ASSERT_EQ(r.run({"tasks.yaml"}).exit_code, 3);
  const auto run = r.runs().at(0);
  fs::create_directories(run / "STOP" / "inside");
  auto res = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);
  EXPECT_TRUE(fs::is_directory(run / "STOP"));
  EXPECT_EQ(lines_with(res.err, "STOP is not a regular file: ignored"), 1u) << res.err;
}

// A client that stays after its result (or a process it started that keeps its output open) holds
// a call for exit_grace_seconds, not for ever; call_timeout_seconds bounds a whole call.
TEST(RunE2E, AClientThatStaysAfterItsResultHoldsTheRunOnlyForTheGrace) {
  RunRig r;
  r.env.set("STANDIN_AFTER_RESULT", "sleep 20 &");  // a background child holding stdout
  r.env.set("CTXKIT_RUNNER_EXIT_GRACE_SECONDS", "1");
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run({"tasks.yaml"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  EXPECT_EQ(r.calls().size(), 3u);
  EXPECT_EQ(lines_with(res.err, "held its output open 1 s after its"), 3u) << res.err;
  EXPECT_EQ(r.report()["status"], "completed");
}

TEST(RunE2E, ACallTimeoutEndsAClientThatHangs) {
  RunRig t;
  t.replies("HANG\nDONE\n");
  t.env.set("CTXKIT_RUNNER_CALL_TIMEOUT_SECONDS", "1");
  auto timed = t.run({"tasks.yaml"});
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_EQ(lines_with(timed.err, "longer than call_timeout_seconds (1 s)"), 1u) << timed.err;
  const json first = json::parse(read_file(t.runs().at(0) / "tasks" / "t1" / "iter-001.result.json"));
  EXPECT_EQ(first["timed_out"], true);
  EXPECT_EQ(t.calls().size(), 4u);  // t1 again after the timeout, then t2, t3
}

}  // namespace
}  // namespace ctxkit::test
