#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"
#include "util/time.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// A stand-in `claude`: records each call (how it picks its session, whether it got an anchor,
// the prompt's first line, its cwd and stdin) as one line of $STANDIN_LOG, and answers in
// stream-json with the next line of $STANDIN_REPLIES (DONE, NONE, BLOCKED <why>, FAIL, SLEEP,
// HANG (its pid in hang-pid, then 30 s), STOP, PAUSE; DONE when the file has run out). `/compact`
// calls answer as the real client does and use no reply (with $STANDIN_COMPACT_REFUSED set, as it
// does on a session too short to compact; with $STANDIN_COMPACT_LIMIT=<s>, the first is refused as
// USAGE_LIMIT <s> refuses a call). Every answer reports usage input 10, cache creation 100,
// cache read 1000, output 5 (a compaction: 100/0/0/20 through modelUsage) and costs $0.25; its last
// assistant message reports cache read 1000 (a context of 1,110), or the n-th line of
// $STANDIN_CONTEXTS when there is one, and the result's modelUsage a contextWindow of
// $STANDIN_WINDOW (200000; none: no contextWindow); $STANDIN_INIT_EXTRA is added to the members
// of its init event. Refusals, printed as Claude Code prints them
// (tests/fixtures/claude-code-*/limits/, exit 1, nothing on stderr): USAGE_LIMIT <s> (a
// subscription's 5-hour limit resetting in s seconds, as 2.1.332 words it), RATE_LIMIT (429 with an
// API key, after its retries, as 2.1.197 words it), OVERLOADED (529), SERVER_ERROR (500: no limit).
// $STANDIN_AFTER_RESULT, when set, is run by sh after the result is printed, before the stand-in
// exits (as the real client's exit takes 40-50 ms), with the call's number as $1; the time just
// before the result went out is then in result-<n>.
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
refuse() {  # $1: the result's text, $2: its extra fields, $3: the synthetic message's error
  printf '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"%s"}],"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}},"parent_tool_use_id":null,"session_id":"%s","error":"%s"}\n' "$1" "$sid" "$3"
  printf '{"session_id":"%s","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"is_error":true,"num_turns":1,"subtype":"success",%s"result":"%s","type":"result"}\n' "$sid" "$2" "$1"
  exit 1
}
retries() {  # $1: the status, $2: the error
  printf '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":538,"error_status":%s,"error":"%s","session_id":"%s"}\n' "$1" "$2" "$sid"
  printf '{"type":"system","subtype":"api_retry","attempt":2,"max_retries":2,"retry_delay_ms":1104,"error_status":%s,"error":"%s","session_id":"%s"}\n' "$1" "$2" "$sid"
}
usage_limit() {  # $1: seconds to the reset
  reset=$(( $(date +%s) + $1 ))
  # As the client words it: the time within 24 hours, else the date first (and the year when
  # it is not this one's).
  if [ "$1" -le 86400 ]; then fmt='+%-l:%M%P'
  elif [ "$(date -u -d "@$reset" +%Y)" = "$(date -u +%Y)" ]; then fmt='+%b %-d, %-l:%M%P'
  else fmt='+%b %-d, %Y, %-l:%M%P'; fi
  when=$(date -u -d "@$reset" "$fmt" | sed 's/:00\([ap]m\)/\1/')
  printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour","isUsingOverage":false},"session_id":"%s"}\n' "$reset" "$sid"
  refuse "You\u0027ve hit your 5-hour limit \u00b7 resets $when (UTC)" '"api_error_status":429,"api_error_type":"rate_limit_error","api_error":"usage_limit_reached","terminal_reason":"api_error",' rate_limit
}
case "$last" in
  /compact*)
    printf 'call=compact sid=%s anchor=%s focus=%s\n' "$sid" "$anchor" "$(printf '%s' "$last" | head -1)" >> "$STANDIN_LOG"
    printf '{"type":"system","subtype":"init","session_id":"%s"}\n' "$sid"
    if [ -n "$STANDIN_COMPACT_LIMIT" ] && [ ! -e "$STANDIN_DIR/compact-refused" ]; then
      touch "$STANDIN_DIR/compact-refused"
      usage_limit "$STANDIN_COMPACT_LIMIT"
    fi
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
  USAGE_LIMIT*|RATE_LIMIT|OVERLOADED|SERVER_ERROR) printf '{"type":"system","subtype":"init","session_id":"%s"}\n' "$sid";;
esac
case "$reply" in
  USAGE_LIMIT*) usage_limit "${reply#USAGE_LIMIT }";;
  RATE_LIMIT)
    retries 429 rate_limit
    refuse "API Error: Request rejected (429) \u00b7 Number of request tokens has exceeded your per-minute rate limit" '"api_error_status":429,"terminal_reason":"completed",' rate_limit;;
  OVERLOADED)
    retries 529 overloaded
    refuse "API Error: 529 Overloaded. This is a server-side issue, usually temporary \u2014 try again in a moment." '"api_error_status":529,"api_error_type":"overloaded_error","terminal_reason":"api_error",' server_error;;
  SERVER_ERROR)
    retries 500 server_error
    refuse "API Error: 500 Internal server error. This is a server-side issue, usually temporary." '"api_error_status":500,"api_error_type":"api_error","terminal_reason":"api_error",' server_error;;
esac
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
printf '{"type":"system","subtype":"init","session_id":"%s"%s}\n' "$sid" "$STANDIN_INIT_EXTRA"
printf '{"type":"user","message":{"role":"user","content":"big tool output"}}\n'
cr=$(sed -n "${n}p" "$STANDIN_CONTEXTS" 2>/dev/null); [ -n "$cr" ] || cr=1000
printf '{"type":"assistant","message":{"role":"assistant","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":%s,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"%s"}\n' "$cr" "$sid"
[ -z "$STANDIN_AFTER_RESULT" ] || date +%s%N > "$STANDIN_DIR/result-$n"
win=",\"contextWindow\":${STANDIN_WINDOW:-200000}"; [ "$STANDIN_WINDOW" != none ] || win=""
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","total_cost_usd":0.25,"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5},"modelUsage":{"m":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":1000,"cacheCreationInputTokens":100%s}}}\n' "$text" "$sid" "$win"
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
    env.set("STANDIN_CONTEXTS", (standin_dir / "contexts").string());
    tmp.write("proj/tasks.yaml",
              "- id: t1\n  title: Write the parser\n  description: Parse the input.\n  acceptance: "
              "[parses the sample]\n"
              "- id: t2\n  title: Write the printer\n"
              "- id: t3\n  title: Wire them together\n  depends_on: [t1, t2]\n");
  }
  void replies(const std::string& lines) const { std::ofstream(standin_dir / "replies") << lines; }
  // The cache read of each call's last message (its context is that + 110), one a line.
  void contexts(const std::string& lines) const {
    std::ofstream(standin_dir / "contexts") << lines;
  }
  // The run's events of one kind, in order.
  std::vector<json> events(const fs::path& run, const std::string& kind) const {
    std::vector<json> out;
    std::ifstream in(run / "events.jsonl");
    for (std::string line; std::getline(in, line);) {
      json ev = json::parse(line, nullptr, false);
      if (ev.is_object() && ev.value("event", "") == kind) out.push_back(ev);
    }
    return out;
  }
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
  util::ProcessResult run(const std::vector<std::string>& args) const {
    return run_tool("ctx-run", args, "", env, project);
  }
  // ctx-run started with `args` in the project, left running.
  Result<util::Child> spawn(const std::vector<std::string>& args) const {
    util::SpawnSpec spec;
    spec.argv = {bin_dir() + "/ctx-run"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = project;
    spec.env = env.vars();
    return util::Child::spawn(spec);
  }
  // A continuous run of tasks.yaml that a STOP file stopped after its first call (exit 3), to
  // be resumed; its folder in `folder`.
  ::testing::AssertionResult stopped_run(fs::path& folder) const {
    replies("STOP\nDONE\nDONE\n");
    const auto res = run({"tasks.yaml"});
    if (res.exit_code != 3)
      return ::testing::AssertionFailure() << "exit " << res.exit_code << ": " << res.err;
    folder = runs().at(0);
    return ::testing::AssertionSuccess();
  }
  std::vector<fs::path> runs() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(project / ".ctxkit" / "runs", ec))
      out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  json run_json(const fs::path& folder) const {
    return json::parse(read_file(folder / "run.json"));
  }
  json report(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args{"report", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string prompt(int n) const {
    return read_file(standin_dir / ("prompt-" + std::to_string(n)));
  }
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
    const std::string git =
        "git -C '" + project.string() + "' -c user.name=t -c user.email=t@localhost ";
    ASSERT_EQ(std::system(
                  (git + "init -q -b main && " + git + "commit -q --allow-empty -m start").c_str()),
              0);
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
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "resume", "resume", "resume", "resume", "resume"}));
  for (const auto& c : calls) EXPECT_EQ(c.sid, calls[0].sid);
  EXPECT_EQ(calls[0].sid.size(), 36u);
  // The prompt goes as an argument; nothing on stdin; the client runs in the project.
  EXPECT_NE(
      calls[0].rest.find("cwd=" + r.project.string() + " stdin= prompt=Task t1: Write the parser"),
      std::string::npos)
      << calls[0].rest;
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
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "resume", "fresh", "resume", "fresh", "resume"}));
  EXPECT_EQ(calls[1].sid, calls[0].sid);
  EXPECT_EQ(calls[3].sid, calls[2].sid);
  EXPECT_NE(calls[2].sid, calls[0].sid);
  EXPECT_NE(calls[4].sid, calls[2].sid);
  // Every call of a session carries the same anchor, byte for byte (the prompt cache holds).
  for (const auto& c : calls) EXPECT_TRUE(c.anchor);
  const std::vector<std::string> anchors_of_first = r.anchors_of(calls[0].sid);
  ASSERT_EQ(anchors_of_first.size(), 2u);
  EXPECT_EQ(anchors_of_first[0], anchors_of_first[1]);
  EXPECT_NE(anchors_of_first[0].find("Task t1: Write the parser\nParse the input.\nAcceptance "
                                     "criteria:\n- [ ] parses the sample"),
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
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "resume", "fresh", "resume", "fresh", "resume"}));
  const std::string second_anchor = r.anchor_of(calls[2].sid);
  EXPECT_NE(second_anchor.find("Project rules: small commits."), std::string::npos);
  EXPECT_NE(second_anchor.find("## Previous task summary\nTask t1: Write the parser\nStatus: done"),
            std::string::npos)
      << second_anchor;
  EXPECT_NE(second_anchor.find("- keep it simple"), std::string::npos);
  const auto run = r.runs().at(0);
  EXPECT_NE(read_file(run / "task_summary.md").find("Task t3: Wire them together"),
            std::string::npos);
  // Events: JSONL in the run folder, the same rows in the state database.
  const std::string events = read_file(run / "events.jsonl");
  EXPECT_NE(events.find(R"("event":"task_completed","run_id")"), std::string::npos);
  EXPECT_NE(
      events.find(R"("context_mode":"hybrid","task_id":"t1","iterations":2,"tokens_used":2230)"),
      std::string::npos)
      << events;
  auto store = store::StateStore::open(r.tmp / "home/.local/state/ctxkit/state.db", 1000);
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
  // The side-by-side rows carry each run's numbers, in the order of the runs.
  std::map<std::string, std::string> side;
  std::istringstream lines(text.out.substr(text.out.find("side by side:")));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string label, w, values;
    while (words >> w) {
      if (std::isdigit(static_cast<unsigned char>(w[0])))
        values += (values.empty() ? "" : " ") + w;
      else if (values.empty())
        label += (label.empty() ? "" : " ") + w;
    }
    side[label] = values;
  }
  EXPECT_EQ(side["tasks done"], "3/3 3/3") << text.out;
  EXPECT_EQ(side["iterations"], "3 3") << text.out;
  EXPECT_EQ(side["context resets"], "0 2") << text.out;
  EXPECT_EQ(side["tokens input"], "30 30") << text.out;
  EXPECT_EQ(side["tokens cache_read"], "3000 3000") << text.out;
  EXPECT_EQ(side["tokens total"], "3345 3345") << text.out;
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
  std::ofstream(r.bin / "git") << "#!/bin/sh\nprintf '%s %s\\n' \"$(date +%s%N)\" \"$*\" >> "
                                  "\"$STANDIN_DIR/git-log\"\nexec /usr/bin/git \"$@\"\n";
  fs::permissions(r.bin / "git", fs::perms::owner_all);
}

std::vector<long long> git_status_starts(const RunRig& r) {
  std::vector<long long> out;
  std::istringstream log(read_file(r.standin_dir / "git-log"));
  for (std::string line; std::getline(log, line);)
    if (line.find(" status ") != std::string::npos)
      out.push_back(std::stoll(line.substr(0, line.find(' '))));
  return out;
}

// A script for STANDIN_AFTER_RESULT: waits (20 s at most) until git-log shows more than
// `$1 * per_call + before` status calls, then writes asked-$1 ("yes", or "no" when the wait ran
// out), then runs `then`. Waiting on the runner's git call instead of for a time: a runner that
// asked git only after the client's exit would keep the stand-in waiting until the bound.
std::string wait_for_status(int per_call, int before, const std::string& then = "") {
  return "want=$(( $1 * " + std::to_string(per_call) + " + " + std::to_string(before) +
         " )); i=0; while n=$(grep -c ' status ' \"$STANDIN_DIR/git-log\" 2>/dev/null); [ "
         "\"${n:-0}\" -le \"$want\" ] && [ $i -lt 1000 ]; do "
         "sleep 0.02; i=$((i+1)); done; if [ $i -lt 1000 ]; then echo yes; else echo no; fi > "
         "\"$STANDIN_DIR/asked-$1\"; " +
         then;
}

// The next fresh session's git state is asked for as soon as the client prints its result, while
// it is still running: the stand-in does not exit until a git wrapper has logged the `status` that
// follows its result (git run after the client's exit would never come).
TEST(RunE2E, GitIsAskedWhileTheClientIsStillExiting) {
  RunRig r;
  r.init_repo();
  log_git(r);
  // Before call n's result: one status before the first call and one after each earlier result.
  r.env.set("STANDIN_AFTER_RESULT", wait_for_status(1, 0));
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  for (int n : {1, 2, 3})
    EXPECT_EQ(read_file(r.standin_dir / ("asked-" + std::to_string(n))), "yes\n")
        << "call " << n << ": no git status while the client was still running\n"
        << read_file(r.standin_dir / "git-log");
  for (int n : {1, 2}) {
    // tasks.yaml is not committed.
    EXPECT_NE(
        r.anchor_of(calls[static_cast<size_t>(n)].sid)
            .find("## Git state (when this session started)\nBranch: main\nUncommitted files: 1\n"),
        std::string::npos)
        << r.anchor_of(calls[static_cast<size_t>(n)].sid);
  }
  // Nothing asked twice: one status before the first call, then one after each call's result
  // (the last one's is not needed, but the runner cannot know that before it reads the answer).
  EXPECT_EQ(git_status_starts(r).size(), 4u) << read_file(r.standin_dir / "git-log");
}

// What git was asked ahead is not used once the repository has moved: a commit made after the
// result (by a SessionEnd hook, say), once git has been asked ahead, is in the next session's
// anchor.
TEST(RunE2E, ACommitAfterTheResultIsInTheNextAnchor) {
  RunRig r;
  r.init_repo();
  log_git(r);
  // Before call n's result: 2n - 1 status calls (one before the first call, two for each earlier
  // call); the commit waits for the one asked ahead at this result.
  r.env.set("STANDIN_AFTER_RESULT",
            wait_for_status(2, -1,
                            "git -c user.name=t -c user.email=t@localhost commit -q --allow-empty "
                            "-m \"after result $1\""));
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(read_file(r.standin_dir / "asked-1"), "yes\n") << read_file(r.standin_dir / "git-log");
  EXPECT_NE(r.anchor_of(calls[1].sid).find("Last commits:\n"), std::string::npos);
  EXPECT_NE(r.anchor_of(calls[1].sid).find(" after result 1\n"), std::string::npos)
      << r.anchor_of(calls[1].sid);
  EXPECT_NE(r.anchor_of(calls[2].sid).find(" after result 2\n"), std::string::npos)
      << r.anchor_of(calls[2].sid);
  // Asked ahead and refused: one status before the first call, then for each of the first two
  // calls the one at its result and the one asked again after the commit, and the last call's.
  EXPECT_EQ(git_status_starts(r).size(), 6u) << read_file(r.standin_dir / "git-log");
}

constexpr const char* kTemplate =
    "name: ship\ndescription: plan, build, review\nsteps:\n"
    "  - id: plan\n    type: action\n    instructions: Write the plan.\n"
    "  - id: build\n    type: action\n    context: clear\n    instructions: Build what the plan "
    "says.\n"
    "  - id: review\n    type: action\n    context: compact\n    compact_focus: the review of the "
    "build\n    instructions: Review the build.\n";

TEST(RunE2E, WorkflowClearIsAFreshSessionAndCompactRunsSlashCompact) {
  RunRig r;
  r.tmp.write("proj/.ctxkit/workflows/ship.yaml", kTemplate);
  auto res = r.run({"--workflow", "ship", "--summary", "ship it"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "compact", "resume"}));
  EXPECT_NE(calls[0].rest.find("prompt=Workflow \"ship\", step plan"), std::string::npos)
      << calls[0].rest;
  EXPECT_NE(calls[1].sid, calls[0].sid);  // /clear: a new session
  EXPECT_EQ(calls[2].sid, calls[1].sid);  // /compact on the session of the step before
  EXPECT_NE(calls[2].rest.find("focus=/compact the review of the build"), std::string::npos)
      << calls[2].rest;
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
              "    - id: code\n      instructions: Code {task.title}.\n    - id: test\n      "
              "instructions: Test {task.id}.\n");
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
  // One closing line on stdout: the run, how it ended, its folder.
  const std::string id = run.filename().string();
  EXPECT_EQ(res.out.rfind("run " + id + " stopped (STOP file): ", 0), 0u) << res.out;
  EXPECT_TRUE(res.out.ends_with("/.ctxkit/runs/" + id + "\n")) << res.out;
  EXPECT_EQ(line_count(res.out), 1u) << res.out;
  auto again = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("run " + id + " completed: ", 0), 0u) << again.out;
  EXPECT_EQ(line_count(again.out), 1u) << again.out;
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
  // Every call after the first notes whether a PAUSE file was there while it ran.
  r.env.set("STANDIN_AFTER_RESULT",
            "[ \"$1\" = 1 ] || for d in .ctxkit/runs/*/; do [ ! -e \"$d/PAUSE\" ] || "
            "echo \"call $1\" >> \"$STANDIN_DIR/ran-while-paused\"; done");
  util::SpawnSpec spec;
  spec.argv = {"sh", "-c", "exec \"$0\" tasks.yaml > out.txt 2> err.txt", bin_dir() + "/ctx-run"};
  spec.cwd = r.project;
  spec.env = r.env.vars();
  auto child = util::Child::spawn(spec);
  ASSERT_TRUE(child) << child.error().message;
  // Waits for run.json to say paused (30 s at most).
  fs::path run;
  bool paused = false;
  for (int i = 0; i < 1500 && !paused; ++i) {
    auto runs = r.runs();
    if (!runs.empty() && fs::exists(runs[0] / "run.json")) {
      run = runs[0];
      try {
        paused = r.run_json(run)["status"] == "paused";
      } catch (const json::exception&) {  // never half written (replaced atomically), but be sure
      }
    }
    if (!paused) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(paused);
  EXPECT_EQ(r.calls().size(), 1u);  // nothing ran after the pause began
  fs::remove(run / "PAUSE");
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 0) << read_file(r.project / "err.txt");
  EXPECT_EQ(r.calls().size(), 3u);
  EXPECT_FALSE(fs::exists(r.standin_dir / "ran-while-paused"))
      << read_file(r.standin_dir / "ran-while-paused");
  // The events, in order: the first iteration, the pause and its end, then the other two. The
  // wait is not counted as the runner's work of the next iteration: that iteration's runner_ms,
  // its client_ms and the pause add up to no more than the time between the two iterations'
  // events (give or take the moment each event was stamped).
  std::istringstream events(read_file(run / "events.jsonl"));
  std::vector<std::string> kinds_seen;
  std::vector<json> iterations;
  int64_t paused_ms = -1;
  for (std::string line; std::getline(events, line);) {
    const json ev = json::parse(line);
    const std::string kind = ev["event"];
    if (kind == "iteration") iterations.push_back(ev);
    if (kind == "run_unpaused") paused_ms = ev["paused_ms"].get<int64_t>();
    if (kind == "iteration" || kind.starts_with("run_")) kinds_seen.push_back(kind);
  }
  EXPECT_EQ(kinds_seen,
            (std::vector<std::string>{"run_started", "iteration", "run_paused", "run_unpaused",
                                      "iteration", "iteration", "run_ended"}));
  ASSERT_EQ(iterations.size(), 3u);
  ASSERT_GE(paused_ms, 0);
  const auto at = [](const json& ev) {
    return util::parse_iso8601_ms(ev["at"].get<std::string>()).value_or(0);
  };
  const int64_t between = at(iterations[1]) - at(iterations[0]);
  EXPECT_LE(iterations[1]["runner_ms"].get<int64_t>() + iterations[1]["client_ms"].get<int64_t>() +
                paused_ms,
            between + 100)
      << "paused " << paused_ms << " ms; " << iterations[1].dump();
}

bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         text[paren + 2] == 'Z';  // a zombie
}

// kill -9 in the middle of a call: the client goes too (it would go on working in the project
// beside the next ctx-run); the run is reported as interrupted and --resume goes on from the
// last recorded iteration. While a ctx-run drives a run, a second one may not.
TEST(RunE2E, KilledMidCallTakesTheClientAlongAndResumeGoesOn) {
  RunRig r;
  r.replies("DONE\nHANG\n");
  auto child = r.spawn({"tasks.yaml", "--context-mode", "fresh-per-task"});
  ASSERT_TRUE(child) << child.error().message;
  const fs::path pid_file = r.standin_dir / "hang-pid";
  for (int i = 0; i < 200 && !fs::exists(pid_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
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
  auto child = r.spawn({"tasks.yaml"});
  ASSERT_TRUE(child);
  for (int i = 0; i < 100 && r.calls().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(r.calls().size(), 1u);
  child->signal(SIGINT);
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 130);
  const auto run = r.runs().at(0);
  const json j = r.run_json(run);
  EXPECT_EQ(j["status"], "stopped");
  EXPECT_EQ(j["iterations"], 1);  // the call in flight was recorded
  EXPECT_EQ(j["tasks"][0]["status"], "done");
  EXPECT_EQ(r.calls().size(), 1u);
  auto again = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(r.calls().size(), 3u);
}

TEST(RunE2E, DryRunPrintsThePlanAndRunsNothing) {
  RunRig r;
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-task", "--dry-run", "--model",
                    "claude-sonnet-4-5"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_TRUE(r.calls().empty());
  EXPECT_FALSE(fs::exists(r.project / ".ctxkit"));
  EXPECT_NE(res.out.find("run plan: mode fresh-per-task"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("argv: claude --model claude-sonnet-4-5 --output-format stream-json "
                         "--verbose -p --session-id"),
            std::string::npos)
      << res.out;
  EXPECT_NE(res.out.find("anchor ("), std::string::npos);
  EXPECT_NE(res.out.find("task t3 (Wire them together)"), std::string::npos);
}

TEST(RunE2E, BadInputIsOneLineAndRecordsNothing) {
  RunRig r;
  r.tmp.write("proj/cycle.yaml",
              "- {id: a, title: A, depends_on: [b]}\n- {id: b, title: B, depends_on: [a]}\n");
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
  const std::string before =
      "# my settings\n[context]\nwarn_threshold = 55 # keep\n\n[runner]\nmode = \"continuous\"  # "
      "was\nmax_iterations = 9\n";
  r.tmp.write("proj/.work.toml", before);
  auto res = r.run({"config", "set", "runner.mode", "hybrid"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::string after = read_file(r.project / ".work.toml");
  std::string expected = before;
  expected.replace(expected.find("\"continuous\""), 12, "\"hybrid\"");
  EXPECT_EQ(after, expected);
  // And the runner takes it.
  auto plan = r.run({"tasks.yaml", "--dry-run"});
  EXPECT_NE(plan.out.find("mode hybrid (" + (r.project / ".work.toml").string() + ")"),
            std::string::npos)
      << plan.out;
  EXPECT_EQ(r.run({"config", "set", "runner.mode", "often"}).exit_code, 1);
  EXPECT_EQ(read_file(r.project / ".work.toml"), expected);
}

// --- options and paths of a real run ---------------------------------------------------------

// A wrapper in front of the stand-in: logs each call's arguments (one a line, then "--") to
// args-log and, when the file `tokens` in the stand-in's folder holds a number, appends to the
// call's session transcript (HOME/.claude/projects/-proj/<session>.jsonl) a reading of that many
// tokens, as the real client would write one.
void wrap_standin(const RunRig& r) {
  fs::rename(r.bin / "claude", r.bin / "claude-standin");
  std::ofstream(r.bin / "claude")
      << "#!/bin/sh\n"
         "{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; echo --; } >> "
         "\"$STANDIN_DIR/args-log\"\n"
         "sid=''; prev=''; for a in \"$@\"; do case \"$prev\" in --session-id|--resume) "
         "sid=\"$a\";; esac; prev=\"$a\"; done\n"
         "if [ -n \"$sid\" ] && [ -s \"$STANDIN_DIR/tokens\" ]; then\n"
         "  t=$(cat \"$STANDIN_DIR/tokens\"); mkdir -p \"$HOME/.claude/projects/-proj\"\n"
         "  printf "
         "'{\"type\":\"assistant\",\"isSidechain\":false,\"timestamp\":\"2026-11-21T12:00:00."
         "000Z\",\"message\":{\"id\":\"m%s\","
         "\"model\":\"claude-sonnet-4-5\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
         "\"text\":\"ok\"}],"
         "\"usage\":{\"input_tokens\":%s,\"cache_creation_input_tokens\":0,\"cache_read_input_"
         "tokens\":0}}}\\n' \"$sid\" \"$t\" "
         ">> \"$HOME/.claude/projects/-proj/$sid.jsonl\"\n"
         "fi\n"
         "exec \"$(dirname \"$0\")/claude-standin\" \"$@\"\n";
  fs::permissions(r.bin / "claude", fs::perms::owner_all);
}

// The events of a run's events.jsonl, parsed.
std::vector<json> events_of(const fs::path& run) {
  std::vector<json> out;
  std::istringstream in(read_file(run / "events.jsonl"));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

size_t count_events(const std::vector<json>& events, const std::string& kind) {
  return static_cast<size_t>(std::count_if(events.begin(), events.end(),
                                           [&](const json& e) { return e["event"] == kind; }));
}

// --on-fail retry: a task not done after max_task_iterations starts over (its attempts counted
// again from one); a task the agent reports BLOCKED is not retried (it would block again) but
// skipped.
TEST(RunE2E, OnFailRetryStartsATaskOverAndABlockedTaskIsSkipped) {
  RunRig r;
  r.replies("NONE\nNONE\nDONE\n");
  auto res = r.run({"tasks.yaml", "--on-fail", "retry", "--max-task-iterations", "2"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  ASSERT_EQ(r.calls().size(), 5u);  // t1 twice, retried: t1 done; t2; t3
  EXPECT_NE(r.prompt(2).find("This is attempt 2 of at most 2"), std::string::npos) << r.prompt(2);
  EXPECT_EQ(r.prompt(3).find("This is attempt"), std::string::npos)
      << r.prompt(3);  // counted from one again
  EXPECT_NE(r.prompt(3).find("Task t1"), std::string::npos);
  const auto events = events_of(r.runs().at(0));
  ASSERT_EQ(count_events(events, "task_retry"), 1u);
  for (const auto& e : events)
    if (e["event"] == "task_retry") {
      EXPECT_EQ(e["task_id"], "t1");
      EXPECT_EQ(e["reason"], "not reported done after 2 attempt(s)");
    }
  const json rep = r.report();
  EXPECT_EQ(rep["tasks"][0]["status"], "done");
  EXPECT_EQ(rep["tasks"][0]["iterations"], 3);

  RunRig b;
  b.replies("BLOCKED no network\n");
  auto blocked = b.run({"tasks.yaml", "--on-fail", "retry"});
  ASSERT_EQ(blocked.exit_code, 0) << blocked.err;
  EXPECT_EQ(b.calls().size(), 3u);  // t1 once, then t2 and t3
  const json brep = b.report();
  EXPECT_EQ(brep["tasks"][0]["status"], "skipped");
  EXPECT_EQ(brep["tasks"][0]["iterations"], 1);
  EXPECT_EQ(count_events(events_of(b.runs().at(0)), "task_retry"), 0u);
}

// Skipping a workflow step: the workflow is advanced past it with the reason as its output.
TEST(RunE2E, ASkippedWorkflowStepAdvancesTheWorkflowWithTheReason) {
  RunRig r;
  r.tmp.write("proj/.ctxkit/workflows/ship.yaml", kTemplate);
  r.replies("BLOCKED no plan possible\n");
  auto res = r.run({"--workflow", "ship", "--summary", "ship it", "--on-fail", "skip"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 4u);  // plan (skipped), build, its compaction, review
  const json state = json::parse(read_file(r.project / "workflow-state.json"));
  EXPECT_EQ(state["status"], "complete");
  EXPECT_EQ(state["outputs"]["plan"], "[skipped by ctx-run: blocked: no plan possible]");
  EXPECT_EQ(state["outputs"]["build"], "Worked on it.\nDecision: keep it simple");
  EXPECT_EQ(r.report()["tasks"][0]["status"], "skipped");
}

// --project: the run is the project's wherever ctx-run is started; --claude-arg: each one reaches
// every call, in order.
TEST(RunE2E, ProjectAndClaudeArgsReachEveryCall) {
  RunRig r;
  wrap_standin(r);
  auto res = run_tool("ctx-run",
                      {(r.project / "tasks.yaml").string(), "--project", r.project.string(),
                       "--claude-arg=--permission-mode", "--claude-arg", "acceptEdits",
                       "--context-mode", "fresh-per-task"},
                      "", r.env, r.tmp.path());
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& c : calls)
    EXPECT_NE(c.rest.find("cwd=" + r.project.string() + " "), std::string::npos) << c.rest;
  EXPECT_EQ(r.runs().size(), 1u);
  EXPECT_FALSE(fs::exists(r.tmp / ".ctxkit"));
  const std::string args = "\n" + read_file(r.standin_dir / "args-log");
  size_t found = 0;
  for (size_t at = args.find("\n--permission-mode\nacceptEdits\n"); at != std::string::npos;
       at = args.find("\n--permission-mode\nacceptEdits\n", at + 1))
    ++found;
  EXPECT_EQ(found, 3u) << args;
}

// --no-reanchor: fresh sessions start without an anchor (no --append-system-prompt, no anchors/).
TEST(RunE2E, NoReanchorGivesNoSessionAnAnchor) {
  RunRig r;
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  auto res = r.run({"tasks.yaml", "--context-mode", "fresh-per-task", "--no-reanchor"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(std::set<std::string>({calls[0].sid, calls[1].sid, calls[2].sid}).size(), 3u);
  for (const auto& c : calls) EXPECT_FALSE(c.anchor) << c.rest;
  EXPECT_FALSE(fs::exists(r.runs().at(0) / "anchors"));
  EXPECT_EQ(r.report()["totals"]["anchoring_tokens"], 0);
}

// --anchor-sources: the anchor holds the sources named and no other.
TEST(RunE2E, AnAnchorSourcesSubsetHoldsOnlyThoseSources) {
  RunRig r;
  r.init_repo();
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  ASSERT_EQ(r.run({"tasks.yaml", "--fresh-context", "--anchor-sources", "task"}).exit_code, 0);
  const std::string task_only = r.anchor_of(r.calls().at(0).sid);
  EXPECT_NE(task_only.find("## Current task\nTask t1: Write the parser"), std::string::npos)
      << task_only;
  EXPECT_EQ(task_only.find("Project rules"), std::string::npos) << task_only;
  EXPECT_EQ(task_only.find("## Git state"), std::string::npos) << task_only;

  fs::remove(r.standin_dir / "log");
  ASSERT_EQ(r.run({"tasks.yaml", "--fresh-context", "--anchor-sources", "prompt,git"}).exit_code,
            0);
  const std::string prompt_git = r.anchor_of(r.calls().at(0).sid);
  EXPECT_NE(prompt_git.find("Project rules: small commits."), std::string::npos) << prompt_git;
  EXPECT_NE(prompt_git.find("## Git state (when this session started)\nBranch: main\n"),
            std::string::npos)
      << prompt_git;
  EXPECT_EQ(prompt_git.find("## Current task"), std::string::npos) << prompt_git;
}

// runner.progress_file and progress_lines from the project's .work.toml: each fresh session's
// anchor has the file's last lines as they are when the session starts.
TEST(RunE2E, TheProgressFilesLastLinesAreInEachFreshAnchor) {
  RunRig r;
  r.tmp.write("proj/.work.toml",
              "[runner]\nprogress_file = \"notes/PROGRESS.md\"\nprogress_lines = 2\n");
  r.tmp.write("proj/notes/PROGRESS.md", "line one\nline two\nline three\n");
  // After the first call the agent adds a line.
  r.env.set("STANDIN_AFTER_RESULT", "[ \"$1\" != 1 ] || echo 'line four' >> notes/PROGRESS.md");
  auto res = r.run({"tasks.yaml", "--fresh-context"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  const std::string first = r.anchor_of(calls[0].sid);
  EXPECT_NE(first.find("## Progress (notes/PROGRESS.md, last 2 lines)\nline two\nline three"),
            std::string::npos)
      << first;
  EXPECT_EQ(first.find("line one"), std::string::npos) << first;
  const std::string second = r.anchor_of(calls[1].sid);
  EXPECT_NE(second.find("line three\nline four"), std::string::npos) << second;
  EXPECT_EQ(second.find("line two"), std::string::npos) << second;
}

// A workflow step's context_min_percent with the session's own figure (its transcript, found by
// the session id): under it the compaction is skipped and the step resumes the session; at or
// above it the compaction runs.
TEST(RunE2E, ContextMinPercentDecidesWithTheSessionsFigure) {
  constexpr const char* kGated =
      "name: gated\ndescription: plan, then build\nsteps:\n"
      "  - id: plan\n    type: action\n    instructions: Write the plan.\n"
      "  - id: build\n    type: action\n    context: compact\n    context_min_percent: 50\n    "
      "instructions: Build it.\n";
  for (const auto& [tokens, compacts] :
       {std::pair<std::string, bool>{"16700", false}, {"83500", true}}) {
    RunRig r;
    wrap_standin(r);
    r.env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
    r.tmp.write("proj/.ctxkit/workflows/gated.yaml", kGated);
    std::ofstream(r.standin_dir / "tokens") << tokens;  // 10% and 50% of 167k usable
    auto res = r.run({"--workflow", "gated", "--summary", "go"});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const auto calls = r.calls();
    if (compacts) {
      EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "compact", "resume"})) << tokens;
      EXPECT_EQ(r.report()["totals"]["compactions"], 1);
    } else {
      EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume"})) << tokens;
      EXPECT_EQ(r.report()["totals"]["compactions"], 0);
    }
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.back().sid, calls.front().sid);  // one session either way
  }
}

// The text report's numbers: a row a task and the total, each column what the client reported.
TEST(RunE2E, TheTextReportShowsEachTasksNumbers) {
  RunRig r;
  ASSERT_EQ(r.run({"tasks.yaml", "--no-reanchor"}).exit_code, 0);
  auto text = r.run({"report"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(text.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (!w.empty()) rows[w[0]] = w;
  }
  // task status iter resets compacts input cache_cr cache_read output total anchor share wall_s
  for (const char* t : {"t1", "t2", "t3"}) {
    ASSERT_EQ(rows[t].size(), 13u) << text.out;
    EXPECT_EQ(std::vector<std::string>(rows[t].begin() + 1, rows[t].end() - 1),
              (std::vector<std::string>{"done", "1", "0", "0", "10", "100", "1000", "5", "1115",
                                        "0", "0.0%"}))
        << text.out;
  }
  ASSERT_EQ(rows["total"].size(), 12u) << text.out;  // no status
  EXPECT_EQ(
      std::vector<std::string>(rows["total"].begin() + 1, rows["total"].end() - 1),
      (std::vector<std::string>{"3", "0", "0", "30", "300", "3000", "15", "3345", "0", "0.0%"}))
      << text.out;
  ASSERT_FALSE(rows["run"].empty());
  EXPECT_NE(text.out.find("mode continuous  status completed  3 of 3 tasks done"),
            std::string::npos)
      << text.out;
}

// `ctx-run config set` of runner.on_fail and runner.progress_file: the key is written, a value
// outside the allowed ones is refused, and the runner takes what was written.
TEST(RunE2E, ConfigSetOnFailAndProgressFile) {
  RunRig r;
  ASSERT_EQ(r.run({"config", "set", "runner.on_fail", "skip"}).exit_code, 0);
  ASSERT_EQ(r.run({"config", "set", "runner.progress_file", "docs/PROGRESS.md"}).exit_code, 0);
  const std::string toml = read_file(r.project / ".work.toml");
  EXPECT_NE(toml.find("on_fail = \"skip\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("progress_file = \"docs/PROGRESS.md\""), std::string::npos) << toml;
  auto bad = r.run({"config", "set", "runner.on_fail", "sometimes"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
  EXPECT_EQ(read_file(r.project / ".work.toml"), toml);
  auto plan = r.run({"tasks.yaml", "--dry-run"});
  EXPECT_NE(plan.out.find("on_fail skip"), std::string::npos) << plan.out;
  r.tmp.write("proj/docs/PROGRESS.md", "progress so far\n");
  ASSERT_EQ(r.run({"tasks.yaml", "--fresh-context"}).exit_code, 0);
  EXPECT_NE(r.anchor_of(r.calls().at(0).sid)
                .find("## Progress (docs/PROGRESS.md, last 20 lines)\nprogress so far"),
            std::string::npos)
      << r.anchor_of(r.calls().at(0).sid);
}

// ---- hostile input (issue 23) -------------------------------------------------------------

void write_run_json(const fs::path& run, const json& j) {
  std::ofstream(run / "run.json") << j.dump(2) << "\n";
}

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
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));
  json j = r.run_json(run);
  const fs::path pwned = r.tmp / "pwned";
  j["options"]["claude_bin"] = "/bin/sh";
  j["options"]["claude_args"] = {"-c", "touch '" + pwned.string() + "'"};
  write_run_json(run, j);
  auto res = r.run({"--resume", run.filename().string()});
  EXPECT_FALSE(fs::exists(pwned)) << "run.json's program was run";
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);  // the user's claude (the stand-in on PATH) did the work
  EXPECT_EQ(lines_with(res.err, "records claude_bin \"/bin/sh\" and claude_args [\"-c\","), 1u)
      << res.err;
  EXPECT_EQ(lines_with(res.err, "they are ignored: this run uses \"claude\" and []"), 1u)
      << res.err;
  EXPECT_EQ(r.run_json(run)["options"]["claude_bin"], "claude");  // what ran is what is recorded
}

// A session id the client would read as an option (`--resume` takes an optional value).
TEST(RunE2E, ResumeRefusesASessionIdThatIsNotOne) {
  RunRig r;
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));  // continuous: the next calls resume the session
  json j = r.run_json(run);
  j["session"]["id"] = "--dangerously-skip-permissions";
  write_run_json(run, j);
  auto bad = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
  EXPECT_NE(bad.err.find("the session id \"--dangerously-skip-permissions\" is not a session id"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(r.calls().size(), 1u);
}

// run.json lies in the project: a value of another type reads as its default, and a task past the
// tasks file's own is none of its tasks; the resumed run goes on instead of failing on them.
TEST(RunE2E, ResumeReadsAnOddRunJsonByContent) {
  RunRig r;
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));  // continuous: the next calls resume the session
  json j = r.run_json(run);
  j["session"]["anchor_epoch"] = "two";
  for (auto& t : j["tasks"]) {
    j["attempts"][t["id"].get<std::string>()] = "x";
    t["iterations"] = "one";
    t["compactions"] = nullptr;
  }
  j["tasks"].push_back({{"id", "extra"}, {"status", "pending"}});
  write_run_json(run, j);
  auto res = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);
  const json after = r.run_json(run);
  EXPECT_EQ(after["status"], "completed");
  EXPECT_EQ(after["tasks"].back()["id"], "extra");
  EXPECT_EQ(after["tasks"].back()["status"], "pending");  // not run: no task of the tasks file
}

// The recorded options and task specs read by content too: an option of another type is the
// command line's, a task spec's list of another type is empty; the run goes on.
TEST(RunE2E, ResumeReadsOddOptionsAndTaskSpecsAsTheirDefaults) {
  RunRig r;
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));
  json j = r.run_json(run);
  j["options"]["max_iterations"] = "fifty";
  j["options"]["reanchor"] = 1;
  j["options"]["fresh_at"] = "60";
  j["task_specs"][0]["acceptance"] = {1, "parses the sample"};
  j["task_specs"][1]["title"] = 2;
  j["task_specs"][2]["depends_on"] = "t1";
  write_run_json(run, j);
  auto res = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);
  const json after = r.run_json(run);
  EXPECT_EQ(after["status"], "completed");
  EXPECT_EQ(after["task_specs"][0]["acceptance"], json::array({"parses the sample"}));
}

// A session anchor outside the run folder is not read into the client's system prompt.
TEST(RunE2E, ResumeReadsNoAnchorOutsideTheRunFolder) {
  RunRig r;
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));  // continuous: the next calls resume the session
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
  r.tmp.write("proj/nul.json",
              R"([{"id": "a", "title": "A", "description": "before\u0000after"}])");
  auto refused = r.run({"nul.json"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(line_count(refused.err), 1u) << refused.err;
  EXPECT_NE(refused.err.find("task 1 ('a'): description contains a NUL character"),
            std::string::npos)
      << refused.err;
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
  EXPECT_NE(anchor.find("Rules before.\xEF\xBF\xBDRules after the NUL."), std::string::npos)
      << anchor;
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
  r.tmp.write("proj/.work.toml", "[runner]\nanchor_files = [\"" + secret.string() +
                                     "\", \"NOTES.md\"]\nprogress_file = \"../secret.txt\"\n");
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
  r.tmp.write("home/.config/ctxkit/config.toml",
              "[runner]\nanchor_files = [\"" + secret.string() + "\"]\n");
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
  fs::path run;
  ASSERT_TRUE(r.stopped_run(run));
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
  const json first =
      json::parse(read_file(t.runs().at(0) / "tasks" / "t1" / "iter-001.result.json"));
  EXPECT_EQ(first["timed_out"], true);
  EXPECT_EQ(t.calls().size(), 4u);  // t1 again after the timeout, then t2, t3
}

// Every stand-in call reports 1,115 tokens (10 + 100 + 1000 + 5) and $0.25.
constexpr uint64_t kCallTokens = 1115;

TEST(RunE2E, ATokenBudgetStopsTheRunBetweenCallsAndAResumeWithARaisedOneGoesOn) {
  RunRig r;
  auto res = r.run({"tasks.yaml", "--max-tokens", "2000"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  ASSERT_EQ(r.calls().size(), 2u);  // 1,115 after the first call, 2,230 after the second: no third
  const auto run = r.runs().at(0);
  json j = r.run_json(run);
  EXPECT_EQ(j["status"], "stopped");
  EXPECT_EQ(j["stopped_on"]["scope"], "run");
  EXPECT_EQ(j["stopped_on"]["budget"], "tokens");
  EXPECT_EQ(j["stopped_on"]["limit"].get<double>(), 2000);
  EXPECT_EQ(j["stopped_on"]["spent"].get<double>(), 2 * kCallTokens);
  EXPECT_EQ(j["stopped_on"]["over"].get<double>(), 2 * kCallTokens - 2000);
  EXPECT_NE(
      res.out.find(
          "the run's token budget reached: 2230 tokens spent of 2000 tokens, over by 230 tokens"),
      std::string::npos)
      << res.out;
  EXPECT_EQ(r.events(run, "budget_reached").size(), 1u);
  const json rep = r.report();
  EXPECT_EQ(rep["stopped_on"]["over"].get<double>(), 230);
  auto text = r.run({"report"});
  EXPECT_NE(text.out.find("stopped on the run's token budget: 2230 tokens spent of 2000 tokens, "
                          "over by 230 tokens"),
            std::string::npos)
      << text.out;
  // The same budget: stopped again before any call.
  auto same = r.run({"--resume", run.filename().string()});
  EXPECT_EQ(same.exit_code, 3) << same.err;
  EXPECT_EQ(r.calls().size(), 2u);
  // A raised one: the run goes on where it stopped, in its session.
  auto raised = r.run({"--resume", run.filename().string(), "--max-tokens", "5000"});
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].kind, "resume");
  EXPECT_NE(calls[2].rest.find("prompt=Task t3"), std::string::npos);
  j = r.run_json(run);
  EXPECT_EQ(j["status"], "completed");
  EXPECT_FALSE(j.contains("stopped_on"));
  EXPECT_EQ(j["options"]["max_tokens"], 5000);
  EXPECT_EQ(j["tokens_total"], 3 * kCallTokens);
}

TEST(RunE2E, ACostBudgetFromTheConfigurationStopsTheRun) {
  RunRig r;
  r.replies(kTwoEach);
  r.tmp.write("proj/.work.toml", "[runner]\nmax_cost_usd = 0.6\n");
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.calls().size(), 3u);  // $0.50 after two calls, $0.75 after three
  const auto run = r.runs().at(0);
  const json j = r.run_json(run);
  EXPECT_EQ(j["stopped_on"]["budget"], "cost");
  EXPECT_NEAR(j["stopped_on"]["spent"].get<double>(), 0.75, 1e-9);
  EXPECT_NEAR(j["stopped_on"]["over"].get<double>(), 0.15, 1e-9);
  EXPECT_NEAR(j["cost_usd"].get<double>(), 0.75, 1e-9);
  EXPECT_NEAR(r.report()["totals"]["cost_usd"].get<double>(), 0.75, 1e-9);
  EXPECT_NE(
      res.out.find("the run's cost budget reached: $0.7500 spent of $0.6000, over by $0.1500"),
      std::string::npos)
      << res.out;
  auto raised = r.run({"--resume", run.filename().string(), "--max-cost", "10"});
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_EQ(r.calls().size(), 6u);
  EXPECT_NEAR(r.run_json(run)["cost_usd"].get<double>(), 1.5, 1e-9);
}

TEST(RunE2E, ATasksOwnBudgetStopsTheRunAndIsRaisedInTheTasksFile) {
  RunRig r;
  r.replies("NONE\nNONE\nNONE\nDONE\nDONE\nDONE\n");
  r.tmp.write("proj/budget.yaml",
              "- {id: t1, title: Long one, max_tokens: 2000, max_iterations: 5}\n- {id: t2, title: "
              "Short one}\n");
  auto res = r.run({"budget.yaml"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.calls().size(), 2u);
  const auto run = r.runs().at(0);
  json j = r.run_json(run);
  EXPECT_EQ(j["stopped_on"]["scope"], "task");
  EXPECT_EQ(j["stopped_on"]["task_id"], "t1");
  EXPECT_EQ(j["stopped_on"]["spent"].get<double>(), 2 * kCallTokens);
  EXPECT_NE(res.out.find("task t1's token budget reached"), std::string::npos) << res.out;
  r.tmp.write("proj/budget.yaml",
              "- {id: t1, title: Long one, max_tokens: 10000, max_iterations: 5}\n- {id: t2, "
              "title: Short one}\n");
  auto again = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(r.calls().size(), 5u);  // t1's third and fourth (DONE), then t2
  j = r.run_json(run);
  EXPECT_EQ(j["tasks"][0]["iterations"], 4);
  EXPECT_EQ(j["task_specs"][0]["max_tokens"], 10000);
  // The task's own max_iterations counted its attempts: attempt 4 of at most 5.
  EXPECT_NE(r.prompt(4).find("This is attempt 4 of at most 5"), std::string::npos) << r.prompt(4);
}

TEST(RunE2E, BadBudgetsModesAndThresholdsAreOneLineAndRecordNothing) {
  RunRig r;
  r.tmp.write("proj/badmode.yaml", "- {id: a, title: A, context_mode: sometimes}\n");
  r.tmp.write("proj/badbudget.yaml", "- {id: a, title: A, max_tokens: -5}\n");
  r.tmp.write("proj/badcost.yaml", "- {id: a, title: A, max_cost_usd: lots}\n");
  struct Case {
    std::vector<std::string> args;
    std::string toml, needle;
  };
  const Case cases[] = {
      {{"tasks.yaml", "--max-tokens", "-5"}, "", "--max-tokens must be 0 or more"},
      {{"tasks.yaml", "--max-cost", "-0.5"}, "", "--max-cost must be a number"},
      {{"tasks.yaml", "--max-cost", "nan"}, "", "--max-cost"},
      {{"tasks.yaml"}, "[runner]\nmax_tokens = -1\n", "runner.max_tokens"},
      {{"tasks.yaml"}, "[runner]\nmax_cost_usd = -2.5\n", "runner.max_cost_usd"},
      {{"tasks.yaml"},
       "[runner]\nfresh_at = 80\ncompact_at = 75\n",
       "fresh_at (80) must be below compact_at (75)"},
      {{"tasks.yaml"}, "[runner]\nfresh_at = 75\n", "fresh_at (75) must be below compact_at (75)"},
      {{"tasks.yaml"}, "[runner]\ncompact_at = 0\n", "runner.compact_at"},
      {{"badmode.yaml"}, "", "task 'a': unknown context_mode 'sometimes'"},
      {{"badbudget.yaml"}, "", "max_tokens must be a whole number from 0"},
      {{"badcost.yaml"}, "", "max_cost_usd must be a number"},
  };
  for (const auto& c : cases) {
    r.tmp.write("proj/.work.toml", c.toml);
    auto res = r.run(c.args);
    EXPECT_EQ(res.exit_code, 1) << c.needle << ": " << res.err;
    EXPECT_EQ(line_count(res.err), 1u) << res.err;
    EXPECT_NE(res.err.find(c.needle), std::string::npos) << res.err;
    EXPECT_TRUE(r.runs().empty()) << c.needle;
  }
  EXPECT_TRUE(r.calls().empty());
}

// A budget that cannot be read stops the run before it starts wherever it comes from: the
// environment as the configuration file. An empty value is no budget either: refused (a variable
// meant to hold one, `CTXKIT_RUNNER_MAX_TOKENS=$BUDGET`, came out empty), not taken as 0.
TEST(RunE2E, ABudgetThatDoesNotReadStopsTheRunBeforeItStartsWhereverItComesFrom) {
  RunRig r;
  struct Case {
    std::string var, value;
  };
  const Case cases[] = {
      {"CTXKIT_RUNNER_MAX_TOKENS", "-5"},      {"CTXKIT_RUNNER_MAX_TOKENS", "1k"},
      {"CTXKIT_RUNNER_MAX_TOKENS", ""},        {"CTXKIT_RUNNER_MAX_TOKENS", "1e6"},
      {"CTXKIT_RUNNER_MAX_COST_USD", "$0.50"}, {"CTXKIT_RUNNER_MAX_COST_USD", "nan"},
      {"CTXKIT_RUNNER_MAX_COST_USD", "inf"},   {"CTXKIT_RUNNER_MAX_COST_USD", ""},
      {"CTXKIT_RUNNER_MAX_COST_USD", "-1"},    {"CTXKIT_RUNNER_FRESH_AT", "half"},
  };
  for (const auto& c : cases) {
    util::Env env = r.env;
    env.set(c.var, c.value);
    auto res = run_tool("ctx-run", {"tasks.yaml"}, "", env, r.project);
    EXPECT_EQ(res.exit_code, 1) << c.var << "=" << c.value << ": " << res.err;
    EXPECT_EQ(line_count(res.err), 1u) << res.err;
    EXPECT_NE(res.err.find("ctx-run: error: config: " + c.var + ": "), std::string::npos)
        << res.err;
    // --resume too: a budget given now replaces the recorded one.
    auto resumed = run_tool("ctx-run", {"--resume", "nosuchrun"}, "", env, r.project);
    EXPECT_EQ(resumed.exit_code, 1) << resumed.err;
    EXPECT_NE(resumed.err.find("config: " + c.var), std::string::npos) << resumed.err;
  }
  // A configuration file that does not parse may hold a budget: it cannot be read, so neither.
  r.tmp.write("proj/.work.toml", "[runner]\nmax_cost_usd = $0.50\n");
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_EQ(line_count(res.err), 1u) << res.err;
  EXPECT_NE(res.err.find("ctx-run: error: config: " + (r.project / ".work.toml").string() + ":2:"),
            std::string::npos)
      << res.err;
  EXPECT_TRUE(r.runs().empty());
  EXPECT_TRUE(r.calls().empty());
  // 0 is no budget, as documented; a valid one holds.
  fs::remove(r.project / ".work.toml");
  util::Env zero = r.env;
  zero.set("CTXKIT_RUNNER_MAX_TOKENS", "0");
  EXPECT_EQ(run_tool("ctx-run", {"tasks.yaml"}, "", zero, r.project).exit_code, 0);
}

TEST(RunE2E, ATasksOwnModeHoldsForThatTaskAlone) {
  RunRig r;
  r.replies("DONE\nNONE\nDONE\nDONE\n");
  r.tmp.write("proj/modes.yaml",
              "- {id: t1, title: First}\n"
              "- {id: t2, title: Second, context_mode: fresh-per-iteration, max_iterations: 2}\n"
              "- {id: t3, title: Third}\n");
  auto res = r.run({"modes.yaml", "--context-mode", "continuous"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  // t1 starts the run's session; each of t2's iterations a fresh one; t3 (in the run's mode) goes
  // on in the run's session.
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "fresh", "resume"}));
  EXPECT_NE(calls[1].sid, calls[0].sid);
  EXPECT_NE(calls[2].sid, calls[1].sid);
  EXPECT_EQ(calls[3].sid, calls[0].sid);
  // t2's sessions are anchored to t2; the continuous session of t1 to no task.
  EXPECT_NE(r.anchor_of(calls[1].sid).find("Task t2: Second"), std::string::npos)
      << r.anchor_of(calls[1].sid);
  EXPECT_EQ(r.anchor_of(calls[0].sid).find("Task t1"), std::string::npos);
  EXPECT_NE(r.prompt(3).find("This is attempt 2 of at most 2"), std::string::npos);
  const json rep = r.report();
  EXPECT_EQ(rep["tasks"][0]["context_mode"], "continuous");
  EXPECT_EQ(rep["tasks"][1]["context_mode"], "fresh-per-iteration");
  EXPECT_EQ(rep["tasks"][2]["context_mode"], "continuous");
  EXPECT_EQ(rep["tasks"][1]["resets"], 2);
  EXPECT_EQ(rep["tasks"][2]["resets"], 0);
  auto text = r.run({"report"});
  EXPECT_NE(text.out.find("task t2 ran in context mode fresh-per-iteration"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("task t1 ran in context mode"), std::string::npos) << text.out;
  // The task's max_iterations bounds its attempts: NONE twice ends it under on_fail abort.
  RunRig a;
  a.replies("DONE\nNONE\nNONE\n");
  a.tmp.write("proj/modes.yaml",
              "- {id: t1, title: First}\n- {id: t2, title: Second, max_iterations: 2}\n- {id: t3, "
              "title: Third}\n");
  auto aborted = a.run({"modes.yaml"});
  EXPECT_EQ(aborted.exit_code, 2) << aborted.err;
  EXPECT_EQ(a.calls().size(), 3u);
}

// A task in a mode of its own between two in the run's mode: the one after it goes on in the
// run's session, not in the last session the middle task started; on --resume as well.
TEST(RunE2E, ATaskAfterOneInAModeOfItsOwnGoesOnInTheRunsSession) {
  RunRig r;
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");  // every session an anchor
  r.tmp.write("proj/abc.yaml",
              "- {id: alpha, title: Alpha}\n"
              "- {id: bravo, title: Bravo, context_mode: fresh-per-iteration}\n"
              "- {id: charlie, title: Charlie}\n");
  r.replies("NONE\nDONE\nNONE\nDONE\nNONE\nDONE\n");
  auto res = r.run({"abc.yaml", "--context-mode", "continuous"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "resume", "fresh", "fresh", "resume", "resume"}));
  const std::string s1 = calls[0].sid;
  EXPECT_EQ(calls[1].sid, s1);
  EXPECT_NE(calls[2].sid, s1);
  EXPECT_NE(calls[3].sid, calls[2].sid);
  EXPECT_NE(calls[3].sid, s1);
  EXPECT_EQ(calls[4].sid, s1);
  EXPECT_EQ(calls[5].sid, s1);
  const auto run = r.runs().at(0);
  const json j = r.run_json(run);
  EXPECT_EQ(j["session"]["id"], s1);
  EXPECT_FALSE(j.contains("run_session"));
  // charlie's calls have the anchor the run's session started with; anchor files keep their
  // numbers (one per session started: alpha's, bravo's two).
  EXPECT_EQ(j["session"]["anchor_file"], "anchors/0001.md");
  EXPECT_TRUE(fs::exists(run / "anchors" / "0003.md"));
  ASSERT_EQ(r.events(run, "session_taken_back").size(), 1u);
  EXPECT_EQ(r.events(run, "session_taken_back")[0]["session_id"], s1);
  // The dry run plans the same.
  auto plan = r.run({"abc.yaml", "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("task charlie (Charlie): first call resumes the session"),
            std::string::npos)
      << plan.out;
  const size_t charlie = plan.out.find("task charlie");
  ASSERT_NE(charlie, std::string::npos);
  EXPECT_NE(plan.out.find("--resume \"<session id 1>\"", charlie), std::string::npos) << plan.out;

  // Stopped after bravo, resumed: charlie goes on in alpha's session.
  RunRig s;
  s.tmp.write("proj/abc.yaml", read_file(r.project / "abc.yaml"));
  s.replies("DONE\nNONE\nSTOP\nDONE\n");
  ASSERT_EQ(s.run({"abc.yaml"}).exit_code, 3);
  const auto stopped = s.runs().at(0);
  EXPECT_TRUE(s.run_json(stopped).contains("run_session"));
  auto again = s.run({"--resume", stopped.filename().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  calls = s.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[3].kind, "resume");
  EXPECT_EQ(calls[3].sid, calls[0].sid);
}

TEST(RunE2E, AutoStartsAFreshSessionWithTheSummaryOnceTheContextReachesFreshAt) {
  RunRig r;
  // t1's call leaves 119,110 tokens (59 % of 200,000); t2's the default 1,110.
  r.contexts("119000\n");
  auto res = r.run({"tasks.yaml", "--context-mode", "auto"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "resume"}));
  EXPECT_EQ(calls[2].sid, calls[1].sid);
  const auto run = r.runs().at(0);
  const auto decisions = r.events(run, "auto_decision");
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0]["decision"], "fresh");
  EXPECT_EQ(decisions[0]["task_id"], "t2");
  EXPECT_EQ(decisions[0]["percent"], 119110 * 100 / 200000);
  EXPECT_EQ(decisions[0]["threshold"], 50);
  EXPECT_EQ(decisions[0]["context_tokens"], 119110);
  EXPECT_EQ(decisions[0]["window"], 200000);
  const auto resets = r.events(run, "context_reset");
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0]["why"], "auto");
  // The fresh session carries t1's summary (hybrid's), not a task of its own.
  const std::string anchor = r.anchor_of(calls[1].sid);
  EXPECT_NE(anchor.find("## Previous task summary\nTask t1: Write the parser\nStatus: done"),
            std::string::npos)
      << anchor;
  EXPECT_NE(anchor.find("- keep it simple"), std::string::npos) << anchor;
  EXPECT_EQ(anchor.find("Task t2: Write the printer"), std::string::npos) << anchor;
  EXPECT_NE(
      res.err.find("auto_decision task_id=t2 decision=fresh why=fresh_at percent=59 threshold=50"),
      std::string::npos)
      << res.err;
  const json rep = r.report();
  EXPECT_EQ(rep["mode"], "auto");
  EXPECT_EQ(rep["totals"]["resets"], 1);
  EXPECT_EQ(rep["totals"]["peak_context"], 119110);
}

TEST(RunE2E, AutoMeasuresAgainstTheWindowTheClientReportsAndTheConfiguredThresholds) {
  // The same context in a 1M window is 11 %: no fresh session.
  RunRig big;
  big.contexts("119000\n");
  big.env.set("STANDIN_WINDOW", "1000000");
  ASSERT_EQ(big.run({"tasks.yaml", "--context-mode", "auto"}).exit_code, 0);
  EXPECT_EQ(kinds(big.calls()), (std::vector<std::string>{"fresh", "resume", "resume"}));
  EXPECT_TRUE(big.events(big.runs().at(0), "auto_decision").empty());
  // fresh_at 10 in the configuration: the same 11 % is enough.
  RunRig low;
  low.contexts("119000\n");
  low.env.set("STANDIN_WINDOW", "1000000");
  low.tmp.write("proj/.work.toml", "[runner]\nmode = \"auto\"\nfresh_at = 10\ncompact_at = 20\n");
  ASSERT_EQ(low.run({"tasks.yaml"}).exit_code, 0);
  EXPECT_EQ(kinds(low.calls()), (std::vector<std::string>{"fresh", "fresh", "resume"}));
  const auto d = low.events(low.runs().at(0), "auto_decision");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["percent"], 11);
  EXPECT_EQ(d[0]["threshold"], 10);
  EXPECT_EQ(low.run_json(low.runs().at(0))["options"]["fresh_at"], 10);
}

TEST(RunE2E, AutoCompactsATasksSessionBetweenItsIterationsWithTheTaskAsFocus) {
  RunRig r;
  // t1's first call leaves 159,110 tokens (79 %) and does not finish the task.
  r.replies("NONE\nDONE\nDONE\nDONE\n");
  r.contexts("159000\n");
  auto res = r.run({"tasks.yaml", "--context-mode", "auto"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "compact", "resume", "resume", "resume"}));
  for (const auto& c : calls) EXPECT_EQ(c.sid, calls[0].sid);
  EXPECT_NE(calls[1].rest.find("focus=/compact Task t1: Write the parser"), std::string::npos)
      << calls[1].rest;
  const auto run = r.runs().at(0);
  const auto d = r.events(run, "auto_decision");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["decision"], "compact");
  EXPECT_EQ(d[0]["why"], "compact_at");
  EXPECT_EQ(d[0]["percent"], 79);
  EXPECT_EQ(d[0]["threshold"], 75);
  const auto compacted = r.events(run, "compacted");
  ASSERT_EQ(compacted.size(), 1u);
  EXPECT_EQ(compacted[0]["why"], "auto");
  EXPECT_EQ(r.report()["tasks"][0]["compactions"], 1);
  // A new task at 79 % would have started fresh instead: t2 came after the compaction, at 1,110.
  EXPECT_EQ(r.report()["totals"]["resets"], 0);
}

// The user's [compact] at, in a mode other than auto: continuous keeps its session, so the call
// after the one that left 79 % (of 200,000) is preceded by a compaction of that session, with the
// task as the focus; with action = "rollover" that call starts a fresh session instead.
TEST(RunE2E, CompactAtCompactsBetweenCallsInEveryModeThatKeepsASession) {
  RunRig r;
  r.replies("NONE\nDONE\nDONE\nDONE\n");
  r.contexts("159000\n");
  r.env.set("CTXKIT_COMPACT_AT", "70");
  auto res = r.run({"tasks.yaml", "--context-mode", "continuous"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "compact", "resume", "resume", "resume"}));
  ASSERT_GE(calls.size(), 2u);
  EXPECT_NE(calls[1].rest.find("focus=/compact Task t1: Write the parser"), std::string::npos)
      << calls[1].rest;
  const auto run = r.runs().at(0);
  const auto due = r.events(run, "compact_at");
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0]["percent"], 79);
  EXPECT_EQ(due[0]["threshold"], 70);
  EXPECT_EQ(due[0]["action"], "compact");
  const auto compacted = r.events(run, "compacted");
  ASSERT_EQ(compacted.size(), 1u);
  EXPECT_EQ(compacted[0]["why"], "[compact] at");
  // The run's page: a row and a bar per call, the decision drawn above the call it came before.
  auto page = r.run({"report", "--html", "-"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(occurrences(page.out, "<tr class=\"call\""), 4u);
  EXPECT_EQ(occurrences(page.out, "<g class=\"call"), 4u);
  EXPECT_EQ(occurrences(page.out, "<g class=\"call fresh\""), 1u);
  EXPECT_EQ(occurrences(page.out, "<g class=\"decision\" data-event=\"compact_at\""), 1u);
  EXPECT_EQ(occurrences(page.out, "<g class=\"decision\" data-event=\"compacted\""), 1u);
  EXPECT_NE(page.out.find("[compact] at: compact (79% \u2265 70%), task t1"), std::string::npos);
  const auto second = page.out.find("<g class=\"call\" data-n=\"2\"");
  ASSERT_NE(second, std::string::npos);
  EXPECT_NE(page.out.find("data-event=\"compact_at\"", second), std::string::npos);
  EXPECT_EQ(page.out.find("data-event=\"compact_at\""),
            page.out.find("data-event=\"compact_at\"", second));

  RunRig below;  // 79 % is below 80: nothing
  below.replies("NONE\nDONE\nDONE\nDONE\n");
  below.contexts("159000\n");
  below.env.set("CTXKIT_COMPACT_AT", "80");
  ASSERT_EQ(below.run({"tasks.yaml", "--context-mode", "continuous"}).exit_code, 0);
  EXPECT_EQ(kinds(below.calls()),
            (std::vector<std::string>{"fresh", "resume", "resume", "resume"}));
  EXPECT_TRUE(below.events(below.runs().at(0), "compact_at").empty());

  RunRig roll;
  roll.replies("NONE\nDONE\nDONE\nDONE\n");
  roll.contexts("159000\n");
  roll.env.set("CTXKIT_COMPACT_AT", "70");
  roll.env.set("CTXKIT_COMPACT_ACTION", "rollover");
  ASSERT_EQ(roll.run({"tasks.yaml", "--context-mode", "continuous"}).exit_code, 0);
  const auto rc = roll.calls();
  EXPECT_EQ(kinds(rc), (std::vector<std::string>{"fresh", "fresh", "resume", "resume"}));
  ASSERT_EQ(rc.size(), 4u);
  EXPECT_NE(rc[0].sid, rc[1].sid);
}

// Without a window in the result, auto measures against the model's: 200,000, or 1,000,000 for a
// "[1m]" model.
TEST(RunE2E, AutoWithoutAReportedWindowTakesTheModels) {
  RunRig r;
  r.contexts("119000\n");
  r.env.set("STANDIN_WINDOW", "none");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "auto"}).exit_code, 0);
  EXPECT_EQ(kinds(r.calls()), (std::vector<std::string>{"fresh", "fresh", "resume"}));
  const auto d = r.events(r.runs().at(0), "auto_decision");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["window"], 200000);
  EXPECT_EQ(d[0]["percent"], 59);
  EXPECT_EQ(r.run_json(r.runs().at(0))["session"]["context_window"], 0);  // none reported
  RunRig big;
  big.contexts("119000\n");
  big.env.set("STANDIN_WINDOW", "none");
  ASSERT_EQ(big.run({"tasks.yaml", "--context-mode", "auto", "--model", "claude-sonnet-4-5[1m]"})
                .exit_code,
            0);
  EXPECT_EQ(kinds(big.calls()), (std::vector<std::string>{"fresh", "resume", "resume"}));
  EXPECT_TRUE(big.events(big.runs().at(0), "auto_decision").empty());
}

// Auto counts against where the client that made the call compacts the model it resolved, both
// as the call's init event names them: claude-sonnet-4-6 under 2.1.332 compacts at
// 200,000 - 20,000 - 13,000 = 167,000, so 119,110 tokens are 71 % (59 % of the whole window).
TEST(RunE2E, AutoCountsAgainstWhereTheCallsClientCompactsItsModel) {
  RunRig r;
  r.contexts("119000\n");
  r.env.set("STANDIN_INIT_EXTRA",
            R"(,"model":"claude-sonnet-4-6","claude_code_version":"2.1.332")");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "auto", "--model", "sonnet"}).exit_code, 0);
  const auto d = r.events(r.runs().at(0), "auto_decision");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["window"], 200000);
  EXPECT_EQ(d[0]["denominator"], 167000);
  EXPECT_EQ(d[0]["percent"], 119110 * 100 / 167000);
}

// A --resume of an auto run decides from the context run.json recorded, with the thresholds the
// run was started with, and the fresh session carries the summary of the task before the stop.
TEST(RunE2E, AutoAfterResumeDecidesFromTheRecordedContextAndThresholds) {
  RunRig r;
  r.contexts("119000\n");
  r.env.set("STANDIN_WINDOW", "1000000");  // 11 %: past fresh_at 10 only
  r.replies("STOP\nDONE\nDONE\n");
  util::Env low = r.env;
  low.set("CTXKIT_RUNNER_FRESH_AT", "10");
  low.set("CTXKIT_RUNNER_COMPACT_AT", "20");
  ASSERT_EQ(
      run_tool("ctx-run", {"tasks.yaml", "--context-mode", "auto"}, "", low, r.project).exit_code,
      3);
  const auto run = r.runs().at(0);
  EXPECT_EQ(r.run_json(run)["session"]["context_tokens"], 119110);
  auto again = r.run({"--resume", run.filename().string()});  // no thresholds given now
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "fresh", "resume"}));
  const auto d = r.events(run, "auto_decision");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["task_id"], "t2");
  EXPECT_EQ(d[0]["percent"], 11);
  EXPECT_EQ(d[0]["threshold"], 10);
  EXPECT_NE(r.anchor_of(calls[1].sid).find("Task t1: Write the parser\nStatus: done"),
            std::string::npos)
      << r.anchor_of(calls[1].sid);
}

// Auto's compaction that the client refuses ("Not enough messages to compact."): no compaction is
// counted, the call goes on in the session with its own anchor.
TEST(RunE2E, AutosCompactionTheClientRefusesLeavesTheSessionAsItWas) {
  RunRig r;
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  r.replies("NONE\nDONE\nDONE\nDONE\n");
  r.contexts("159000\n");
  r.env.set("STANDIN_COMPACT_REFUSED", "1");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "auto"}).exit_code, 0);
  const auto calls = r.calls();
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "compact", "resume", "resume", "resume"}));
  const auto run = r.runs().at(0);
  const auto failed = r.events(run, "compact_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["why"], "auto");
  EXPECT_TRUE(r.events(run, "compacted").empty());
  EXPECT_EQ(r.report()["tasks"][0]["compactions"], 0);
  const auto anchors = r.anchors_of(calls[0].sid);
  EXPECT_EQ(std::set<std::string>(anchors.begin(), anchors.end()).size(), 1u);
  EXPECT_FALSE(fs::exists(run / "anchors" / "0002.md"));
}

// A compaction the runner sends that a usage limit refuses is made again once the limit is
// waited out, and only then the call: auto's, and a workflow's.
TEST(RunE2E, ACompactionALimitRefusedIsMadeAgainAfterTheWaitBeforeTheCall) {
  RunRig r;
  r.tmp.write("proj/PROMPT.md", "Project rules: small commits.\n");
  r.replies("NONE\nDONE\nDONE\nDONE\n");
  r.contexts("159000\n");
  r.env.set("STANDIN_COMPACT_LIMIT", "1");
  auto res = r.run({"tasks.yaml", "--context-mode", "auto"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "compact", "compact", "resume",
                                                    "resume", "resume"}));
  for (const auto& c : calls) EXPECT_EQ(c.sid, calls[0].sid);
  const auto run = r.runs().at(0);
  const auto waits = r.events(run, "limit_wait");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]["refused"], "compaction");
  EXPECT_EQ(waits[0]["kind"], "usage limit");
  EXPECT_EQ(r.events(run, "limit_waited").size(), 1u);
  EXPECT_TRUE(r.events(run, "compact_failed").empty());
  ASSERT_EQ(r.events(run, "compacted").size(), 1u);
  EXPECT_EQ(r.report()["tasks"][0]["compactions"], 1);
  EXPECT_TRUE(fs::exists(run / "tasks" / "t1" / "iter-002.compact.limit-1.result.json"));
  EXPECT_EQ(lines_with(res.err, "before the compaction again"), 1u) << res.err;
  // The call after the compaction is t1's second attempt, in the re-anchored session.
  EXPECT_NE(r.prompt(2).find("This is attempt 2 of at most 3"), std::string::npos);
  EXPECT_EQ(r.run_json(run)["session"]["anchor_file"], "anchors/0002.md");

  RunRig w;
  w.tmp.write("proj/.ctxkit/workflows/ship.yaml", kTemplate);
  w.env.set("STANDIN_COMPACT_LIMIT", "1");
  auto wres = w.run({"--workflow", "ship", "--summary", "ship it"});
  ASSERT_EQ(wres.exit_code, 0) << wres.err;
  EXPECT_EQ(kinds(w.calls()),
            (std::vector<std::string>{"fresh", "fresh", "compact", "compact", "resume"}));
  EXPECT_EQ(w.report()["totals"]["compactions"], 1);
  EXPECT_TRUE(w.events(w.runs().at(0), "compact_failed").empty());
}

// Waits (bounded) until the run's events.jsonl holds an event of `kind`.
bool wait_for_event(const RunRig& r, const std::string& kind, int seconds = 30) {
  for (int i = 0; i < seconds * 20; ++i) {
    auto runs = r.runs();
    if (!runs.empty() && !r.events(runs[0], kind).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(RunE2E, AUsageLimitIsWaitedOutAndTheSameCallMadeAgainInItsSession) {
  RunRig r;
  r.replies("DONE\nUSAGE_LIMIT 2\nDONE\nDONE\n");
  auto res = r.run({"tasks.yaml"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  // t2's call again, in the same session, with the same prompt: the refusal was no attempt.
  EXPECT_EQ(kinds(calls), (std::vector<std::string>{"fresh", "resume", "resume", "resume"}));
  for (const auto& c : calls) EXPECT_EQ(c.sid, calls[0].sid);
  EXPECT_EQ(r.prompt(3), r.prompt(2));
  EXPECT_EQ(r.prompt(3).find("This is attempt"), std::string::npos);
  const auto run = r.runs().at(0);
  const auto waits = r.events(run, "limit_wait");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]["kind"], "usage limit");
  EXPECT_EQ(waits[0]["task_id"], "t2");
  EXPECT_EQ(waits[0]["why"], "reset");
  EXPECT_TRUE(waits[0].contains("reset_at"));
  EXPECT_GE(waits[0]["wait_seconds"].get<int>(), 1);
  EXPECT_LE(waits[0]["wait_seconds"].get<int>(), 3);
  EXPECT_NE(waits[0]["message"].get<std::string>().find("You've hit your 5-hour limit"),
            std::string::npos)
      << waits[0];
  const auto waited = r.events(run, "limit_waited");
  ASSERT_EQ(waited.size(), 1u);
  EXPECT_GE(waited[0]["waited_ms"].get<int64_t>(),
            1000 * waits[0]["wait_seconds"].get<int64_t>() - 50);
  EXPECT_EQ(lines_with(res.err, "s for the usage limit to reset at"), 1u) << res.err;
  const json j = r.run_json(run);
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_EQ(j["tasks"][1]["iterations"], 1);
  EXPECT_FALSE(j.contains("refused_call"));
  EXPECT_TRUE(fs::exists(run / "tasks" / "t2" / "iter-002.limit-1.result.json"));
}

TEST(RunE2E, ALimitWithoutAResetWaitsABackoffThatDoublesAndAServerErrorIsAFailedAttempt) {
  RunRig r;
  r.env.set("CTXKIT_RUNNER_LIMIT_BACKOFF_SECONDS", "1");
  r.replies("RATE_LIMIT\nOVERLOADED\nDONE\nSERVER_ERROR\nDONE\nDONE\n");
  auto res = r.run({"tasks.yaml"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 6u);
  // t1's first call was refused twice: made again as it was, a fresh start with the same id (the
  // stand-in writes no transcript).
  EXPECT_EQ(kinds(calls),
            (std::vector<std::string>{"fresh", "fresh", "fresh", "resume", "resume", "resume"}));
  EXPECT_EQ(calls[1].sid, calls[0].sid);
  EXPECT_EQ(calls[2].sid, calls[0].sid);
  const auto run = r.runs().at(0);
  const auto waits = r.events(run, "limit_wait");
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0]["kind"], "rate limit");
  EXPECT_EQ(waits[0]["why"], "backoff");
  EXPECT_EQ(waits[0]["wait_seconds"], 1);
  EXPECT_FALSE(waits[0].contains("reset_at"));
  EXPECT_EQ(waits[1]["kind"], "overloaded");
  EXPECT_EQ(waits[1]["in_a_row"], 2);
  EXPECT_EQ(waits[1]["wait_seconds"], 2);
  EXPECT_EQ(lines_with(res.err, "(no reset time given: backoff)"), 2u) << res.err;
  // The 500 on t2 is an ordinary failure: a second attempt, no wait.
  EXPECT_NE(r.prompt(5).find("This is attempt 2 of at most 3"), std::string::npos);
  EXPECT_EQ(r.run_json(run)["tasks"][1]["iterations"], 2);
}

TEST(RunE2E, PauseAndStopWorkDuringALimitsWaitAndResumeMakesTheCallAgain) {
  RunRig r;
  r.replies("USAGE_LIMIT 120\nDONE\nDONE\nDONE\n");
  auto child = r.spawn({"tasks.yaml"});
  ASSERT_TRUE(child);
  ASSERT_TRUE(wait_for_event(r, "limit_wait"));
  const auto run = r.runs().at(0);
  std::ofstream(run / "PAUSE") << "";
  ASSERT_TRUE(wait_for_event(r, "run_paused"));
  std::ofstream(run / "STOP") << "";
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 3);
  fs::remove(run / "PAUSE");
  json j = r.run_json(run);
  EXPECT_EQ(j["status"], "stopped");
  EXPECT_EQ(j["iterations"], 0);  // the refused call is no iteration
  EXPECT_TRUE(j.contains("refused_call"));
  EXPECT_EQ(r.calls().size(), 1u);
  auto again = r.run({"--resume", run.filename().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[1].kind, "fresh");  // the refused first call, as it was
  EXPECT_EQ(calls[1].sid, calls[0].sid);
  EXPECT_EQ(r.prompt(2), r.prompt(1));
}

TEST(RunE2E, SigintEndsALimitsWait) {
  RunRig r;
  r.replies("DONE\nUSAGE_LIMIT 120\n");
  auto child = r.spawn({"tasks.yaml"});
  ASSERT_TRUE(child);
  ASSERT_TRUE(wait_for_event(r, "limit_wait"));
  child->signal(SIGINT);
  auto st = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->code, 130);
  const json j = r.run_json(r.runs().at(0));
  EXPECT_EQ(j["status"], "stopped");
  EXPECT_EQ(j["iterations"], 1);
  EXPECT_EQ(r.calls().size(), 2u);
}

// A reset more than 32 days away is a reset past the ceiling like any other: the run stops (it
// was taken as no reset at all, and the runner backed off and called again).
TEST(RunE2E, AResetWeeksAwayStopsTheRun) {
  RunRig r;
  r.env.set("CTXKIT_RUNNER_LIMIT_BACKOFF_SECONDS", "1");
  r.replies("USAGE_LIMIT 3456000\nDONE\nDONE\nDONE\n");  // 40 days
  auto res = r.run({"tasks.yaml"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.calls().size(), 1u);
  const json j = r.run_json(r.runs().at(0));
  EXPECT_EQ(j["stopped_on"]["why"], "the reset lies past limit_max_wait_seconds");
  const std::string reset_at = j["stopped_on"].value("reset_at", "");
  const int64_t now_s = util::now_ms() / 1000;
  EXPECT_NEAR(static_cast<double>(util::parse_iso8601_ms(reset_at).value_or(0) / 1000),
              static_cast<double>(now_s + 3456000), 120)
      << reset_at;
}

TEST(RunE2E, OnLimitStopAndAResetPastTheCeilingStopTheRun) {
  RunRig r;
  r.replies("DONE\nUSAGE_LIMIT 3600\n");
  auto res = r.run({"tasks.yaml", "--on-limit", "stop"});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.calls().size(), 2u);
  const json j = r.run_json(r.runs().at(0));
  EXPECT_EQ(j["stopped_on"]["scope"], "limit");
  EXPECT_EQ(j["stopped_on"]["kind"], "usage limit");
  EXPECT_EQ(j["stopped_on"]["why"], "on_limit stop");
  EXPECT_TRUE(j["stopped_on"].contains("reset_at"));
  EXPECT_NE(res.out.find("usage limit (on_limit stop), resets "), std::string::npos) << res.out;
  // Waiting by default, but not past limit_max_wait_seconds.
  RunRig c;
  c.replies("USAGE_LIMIT 3600\n");
  c.tmp.write("proj/.work.toml", "[runner]\nlimit_max_wait_seconds = 60\n");
  auto capped = c.run({"tasks.yaml"});
  EXPECT_EQ(capped.exit_code, 3) << capped.err;
  EXPECT_EQ(c.run_json(c.runs().at(0))["stopped_on"]["why"],
            "the reset lies past limit_max_wait_seconds");
  // An unknown answer to a limit is bad input.
  auto bad = r.run({"tasks.yaml", "--on-limit", "retry"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
  EXPECT_EQ(r.runs().size(), 1u);
}

}  // namespace
}  // namespace ctxkit::test

namespace ctxkit::test {
namespace {

// The run page in a real browser: every call a bar and a row, the decision before the second
// call a mark, nothing fetched.
TEST(RunE2E, TheRunPageInABrowserDrawsEveryCallAndDecision) {
  const auto browser = chromium();
  if (!browser)
    GTEST_SKIP() << "chromium is not installed: the page is not opened in a browser "
                    "(apt-get install chromium; CI installs it)";
  RunRig r;
  r.replies("NONE\nDONE\nDONE\nDONE\n");
  r.contexts("159000\n");
  r.env.set("CTXKIT_COMPACT_AT", "70");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "continuous"}).exit_code, 0);
  const fs::path page = r.project / "run.html";
  auto made = r.run({"report", "--html", page.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  TempDir profile;
  auto res =
      run_browser(*browser, profile,
                  {"--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page.string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::string& dom = res.out;
  ASSERT_NE(dom.find("</svg>"), std::string::npos) << dom.substr(0, 500);
  EXPECT_EQ(occurrences(dom, "<g class=\"call"), 4u);
  EXPECT_EQ(occurrences(dom, "<tr class=\"call\""), 4u);
  EXPECT_EQ(occurrences(dom, "<g class=\"decision\""), 2u);  // compact_at, then compacted
  EXPECT_EQ(occurrences(dom, "<li data-event="), 2u);
  EXPECT_EQ(dom.find("http:"), std::string::npos);
  EXPECT_EQ(dom.find("https:"), std::string::npos);
  EXPECT_EQ(res.err.find("CONSOLE"), std::string::npos) << res.err;  // no script, nothing logged
}

// ctx-run report --html: one page with a bar of each run's tokens when comparing, and a folder
// of an older ctxkit said on the page instead of failing the report.
TEST(RunE2E, ReportAsAPageChartsTheModesTotals) {
  RunRig r;
  r.replies("");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "continuous"}).exit_code, 0);
  fs::remove(r.standin_dir / "count");
  ASSERT_EQ(r.run({"tasks.yaml", "--context-mode", "fresh-per-iteration"}).exit_code, 0);
  const fs::path page = r.project / "report.html";
  auto res = r.run({"report", "--all", "--html", page.string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, page.string() + "\n");
  std::string html = read_file(page);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  size_t bars = 0;
  for (size_t at = html.find("<g class=\"bar\""); at != std::string::npos;
       at = html.find("<g class=\"bar\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u);
  EXPECT_NE(html.find("continuous"), std::string::npos);
  EXPECT_NE(html.find("fresh-per-iteration"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
  // An older run folder: its run.json has another version.
  const fs::path old = r.project / ".ctxkit/runs/20200101T000000Z-old";
  fs::create_directories(old);
  std::ofstream(old / "run.json")
      << R"({"ctxkit":"run","version":0,"run_id":"20200101T000000Z-old"})";
  res = r.run({"report", "--all", "--html", "-"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("run 20200101T000000Z-old: "), std::string::npos);
  EXPECT_NE(res.out.find("is not a ctxkit run folder"), std::string::npos);
}

}  // namespace
}  // namespace ctxkit::test
