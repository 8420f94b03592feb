#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/run_record.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::runner {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// A run.json as ctx-run writes it in the middle of a tasks-file run in auto mode: one task done
// (with its summary), one running after a compaction, a call a limit refused, a workflow action
// still to carry out, the sessions' totals as the client reported them.
const char* kWrittenRunJson = R"json({
  "ctxkit": "run",
  "version": 1,
  "run_id": "20261126T063000.123Z-a1b2c3",
  "project": "/home/u/proj",
  "mode": "auto",
  "mode_origin": "--context-mode",
  "source": {
    "kind": "tasks",
    "tasks_file": "/home/u/proj/tasks.yaml"
  },
  "status": "running",
  "started_at_ms": 1795674600123,
  "ended_at_ms": null,
  "iterations": 3,
  "session": {
    "id": "6f9619ff-8b86-4d11-b42d-00c04fc964ff",
    "task_key": "t2",
    "anchor_epoch": 2,
    "anchor_file": "anchors/0002.md",
    "context_tokens": 91234,
    "context_window": 200000
  },
  "previous_summary": "## Task t1 (done)\nDecision: keep the parser\n",
  "attempts": {
    "t2": 1
  },
  "pending_action": {
    "key": "t2",
    "action": "compact",
    "focus": "the parser"
  },
  "usage": {
    "input": 1200,
    "cache_creation": 3400,
    "cache_read": 56000,
    "output": 789
  },
  "tokens_total": 61389,
  "cost_usd": 0.4321,
  "options": {
    "max_iterations": 50,
    "max_task_iterations": 3,
    "on_fail": "abort",
    "reanchor": true,
    "max_tokens": null,
    "max_cost_usd": 5.0,
    "fresh_at": 60,
    "compact_at": 80,
    "claude_bin": "claude",
    "claude_args": [
      "--model",
      "sonnet"
    ]
  },
  "task_specs": [
    {
      "id": "t1",
      "title": "Parse"
    },
    {
      "id": "t2",
      "title": "Print",
      "max_iterations": 4
    }
  ],
  "tasks": [
    {
      "id": "t1",
      "title": "Parse",
      "status": "done",
      "iterations": 2,
      "resets": 1,
      "compactions": 0,
      "anchoring_tokens": 512,
      "usage": {
        "input": 1000,
        "cache_creation": 3000,
        "cache_read": 50000,
        "output": 700
      },
      "sessions": [
        "0a5f3e4c-1111-4d11-b42d-00c04fc964ff",
        "6f9619ff-8b86-4d11-b42d-00c04fc964ff"
      ],
      "started_at_ms": 1795674600200,
      "ended_at_ms": 1795674700200,
      "wall_ms": 100000,
      "context_mode": "auto",
      "git_head": "0123456789abcdef0123456789abcdef01234567",
      "cost_usd": 0.4,
      "reason": "not reported done after 2 attempt(s)"
    },
    {
      "id": "t2",
      "title": "Print",
      "status": "running",
      "iterations": 1,
      "resets": 0,
      "compactions": 1,
      "anchoring_tokens": 256,
      "usage": {
        "input": 200,
        "cache_creation": 400,
        "cache_read": 6000,
        "output": 89
      },
      "sessions": [
        "6f9619ff-8b86-4d11-b42d-00c04fc964ff"
      ],
      "started_at_ms": 1795674700300,
      "ended_at_ms": null,
      "wall_ms": 0,
      "context_mode": "auto",
      "cost_usd": 0.0321
    }
  ],
  "session_totals": {
    "6f9619ff-8b86-4d11-b42d-00c04fc964ff": {
      "usage": {
        "input": 700,
        "cache_creation": 1400,
        "cache_read": 26000,
        "output": 389
      },
      "cost_usd": 0.2321
    }
  },
  "refused_call": {
    "key": "t2",
    "fresh": false
  }
})json";

std::string written(const RunState& s) {
  return run_state_json(s).dump(2, ' ', false, ojson::error_handler_t::replace);
}

TEST(RunState, ReadsTheRunJsonCtxRunWritesIntoItsFields) {
  const RunState s = run_state_from_json(ojson::parse(kWrittenRunJson));
  EXPECT_EQ(s.run_id, "20261126T063000.123Z-a1b2c3");
  EXPECT_EQ(s.mode, "auto");
  EXPECT_EQ(s.mode_origin, "--context-mode");
  EXPECT_EQ(s.source.kind, "tasks");
  EXPECT_EQ(s.source.tasks_file, "/home/u/proj/tasks.yaml");
  EXPECT_FALSE(s.source.workflow);
  EXPECT_EQ(s.status, "running");
  EXPECT_EQ(s.started_at_ms, 1795674600123);
  EXPECT_FALSE(s.ended_at_ms);
  EXPECT_EQ(s.iterations, 3);
  ASSERT_TRUE(s.session);
  EXPECT_EQ(s.session_id(), "6f9619ff-8b86-4d11-b42d-00c04fc964ff");
  EXPECT_EQ(s.session->task_key, "t2");
  EXPECT_EQ(s.session->anchor_epoch, 2);
  EXPECT_EQ(s.session->anchor_file, "anchors/0002.md");
  EXPECT_EQ(s.session->context_tokens, 91234u);
  EXPECT_EQ(s.session->context_window, 200000u);
  EXPECT_EQ(s.previous_summary, "## Task t1 (done)\nDecision: keep the parser\n");
  EXPECT_EQ(s.attempts, (std::map<std::string, int>{{"t2", 1}}));
  ASSERT_TRUE(s.pending_action);
  EXPECT_EQ(s.pending_action->key, "t2");
  EXPECT_EQ(s.pending_action->action, workflow::ContextAction::Compact);
  EXPECT_EQ(s.pending_action->focus, "the parser");
  EXPECT_EQ(s.usage, (claude::TokenUsage{1200, 3400, 56000, 789}));
  EXPECT_EQ(s.tokens_total, 61389u);
  EXPECT_DOUBLE_EQ(s.cost_usd, 0.4321);
  EXPECT_EQ(s.options.max_iterations, 50);
  EXPECT_EQ(s.options.on_fail, "abort");
  EXPECT_EQ(s.options.reanchor, true);
  EXPECT_FALSE(s.options.max_tokens);
  EXPECT_EQ(s.options.max_cost_usd, 5.0);
  EXPECT_EQ(s.options.compact_at, 80);
  EXPECT_EQ(s.options.claude_args, (std::vector<std::string>{"--model", "sonnet"}));
  ASSERT_EQ(s.task_specs.size(), 2u);
  EXPECT_EQ(s.task_specs[0].spec.id, "t1");
  EXPECT_EQ(s.task_specs[0].spec.max_iterations, 0);
  EXPECT_EQ(s.task_specs[1].spec.title, "Print");
  EXPECT_EQ(s.task_specs[1].spec.max_iterations, 4);
  ASSERT_EQ(s.tasks.size(), 2u);
  const TaskRecord& t1 = s.tasks[0];
  EXPECT_EQ(t1.id, "t1");
  EXPECT_EQ(t1.status, TaskStatus::Done);
  EXPECT_EQ(t1.iterations, 2);
  EXPECT_EQ(t1.resets, 1);
  EXPECT_EQ(t1.anchoring_tokens, 512u);
  EXPECT_EQ(t1.usage.total(), 54700u);
  EXPECT_EQ(t1.sessions.size(), 2u);
  EXPECT_EQ(t1.started_at_ms, 1795674600200);
  EXPECT_EQ(t1.ended_at_ms, 1795674700200);
  EXPECT_EQ(t1.wall_ms, 100000);
  EXPECT_EQ(t1.context_mode, "auto");
  EXPECT_EQ(t1.git_head, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(t1.cost_usd, 0.4);
  EXPECT_EQ(t1.reason, "not reported done after 2 attempt(s)");
  const TaskRecord& t2 = s.tasks[1];
  EXPECT_EQ(t2.compactions, 1);
  EXPECT_FALSE(t2.ended_at_ms);
  EXPECT_FALSE(t2.git_head);
  EXPECT_FALSE(t2.reason);
  ASSERT_TRUE(s.session_totals);
  ASSERT_EQ(s.session_totals->size(), 1u);
  EXPECT_EQ(s.session_totals->begin()->second.usage.cache_read, 26000u);
  EXPECT_DOUBLE_EQ(s.session_totals->begin()->second.cost_usd, 0.2321);
  EXPECT_FALSE(s.stopped_on);
  ASSERT_TRUE(s.refused_call);
  EXPECT_EQ(s.refused_call->key, "t2");
  EXPECT_FALSE(s.refused_call->fresh);
  EXPECT_TRUE(s.extra.empty());
}

// What ctx-run writes after reading it is what it read, key for key and in the same order.
TEST(RunState, WritesTheRunJsonItReadBackAsItWas) {
  const ojson j = ojson::parse(kWrittenRunJson);
  EXPECT_EQ(written(run_state_from_json(j)), j.dump(2));
}

// A new run's state, written and read again, is the same state (and writes the same file).
TEST(RunState, ANewRunsStateSurvivesTheRoundTrip) {
  RunState s;
  s.run_id = "r1";
  s.project = "/p";
  s.mode = "hybrid";
  s.mode_origin = "default";
  s.source.kind = "workflow";
  s.source.workflow = "/w/feature.yaml";
  s.source.name = "feature";
  s.status = "stopped";
  s.started_at_ms = 10;
  s.ended_at_ms = 20;
  s.iterations = 7;
  s.attempts = {{"plan/t1", 2}, {"build", 1}};
  s.usage = {1, 2, 3, 4};
  s.tokens_total = 10;
  s.cost_usd = 1.5;
  s.options.max_iterations = 9;
  s.stopped_on = StopRecord{};
  s.stopped_on->scope = "task";
  s.stopped_on->budget = "cost";
  s.stopped_on->task_id = "build";
  TaskRecord t = TaskRecord::make("build", "Build it", TaskStatus::Failed);
  t.iterations = 3;
  t.sessions = {"a", "b"};
  t.started_at_ms = 11;
  t.ended_at_ms = 19;
  t.wall_ms = 8;
  t.reason = "blocked: no compiler";
  s.tasks.push_back(t);
  s.tasks.push_back(TaskRecord::make("t9", "", TaskStatus::Pending));

  const ojson j = run_state_json(s);
  EXPECT_EQ(j["ctxkit"], "run");
  EXPECT_EQ(j["version"], 1);
  EXPECT_TRUE(j["session"].is_null());
  EXPECT_TRUE(j["pending_action"].is_null());
  EXPECT_FALSE(j.contains("refused_call"));
  EXPECT_FALSE(j.contains("session_totals"));
  EXPECT_TRUE(j["tasks"][1]["started_at_ms"].is_null());
  EXPECT_FALSE(j["tasks"][1].contains("cost_usd"));

  const RunState back = run_state_from_json(ojson::parse(j.dump()));
  EXPECT_EQ(back.attempts, s.attempts);
  EXPECT_EQ(back.ended_at_ms, 20);
  EXPECT_EQ(back.usage, s.usage);
  ASSERT_EQ(back.tasks.size(), 2u);
  EXPECT_EQ(back.tasks[0].reason, "blocked: no compiler");
  EXPECT_EQ(j["tasks"][0]["status"], "failed");
  EXPECT_EQ(back.tasks[0].status, TaskStatus::Failed);
  EXPECT_EQ(back.tasks[1].status, TaskStatus::Pending);
  EXPECT_EQ(back.tasks[0].sessions, t.sessions);
  EXPECT_FALSE(back.tasks[1].started_at_ms);
  EXPECT_EQ(back.source.name, "feature");
  EXPECT_FALSE(back.source.tasks_file);
  EXPECT_EQ(back.options.max_iterations, 9);
  ASSERT_TRUE(back.stopped_on);
  EXPECT_EQ(back.stopped_on->budget, "cost");
  EXPECT_EQ(back.stopped_on->task_id, "build");
  EXPECT_EQ(json::parse(written(back)), json::parse(written(s)));
}

// run.json lies in the project: a value of the wrong type reads as its default, nothing throws,
// keys of a later version are kept.
TEST(RunState, ReadsAnOddRunJsonWithoutThrowingAndKeepsUnknownKeys) {
  const ojson odd = ojson::parse(R"({
    "ctxkit": "run", "version": 1, "run_id": 7, "mode": ["auto"], "source": "tasks",
    "status": null, "started_at_ms": "yesterday", "ended_at_ms": 1.5, "iterations": "3",
    "session": {"id": 5, "anchor_epoch": "two", "context_tokens": -4, "context_window": "big",
                "colour": "blue"},
    "attempts": {"a": "x", "b": 2, "c": 1.5},
    "pending_action": "compact",
    "usage": {"input": -5, "cache_creation": "x", "cache_read": 3, "output": 1e3},
    "tokens_total": -1, "cost_usd": "9", "options": [], "task_specs": {},
    "tasks": [42, {"id": "t", "iterations": 99999999999, "sessions": [1, "s", null],
                   "usage": "lots", "cost_usd": "free", "started_at_ms": "now",
                   "context_mode": 3, "note": "kept"}],
    "session_totals": {"s": 5, "t": {"usage": {"input": 3}, "cost_usd": "x"}},
    "stopped_on": "a budget",
    "refused_call": {"key": 1, "fresh": "yes"},
    "written_by": {"version": 2}
  })");
  RunState s;
  ASSERT_NO_THROW(s = run_state_from_json(odd));
  EXPECT_EQ(s.run_id, "");
  EXPECT_EQ(s.mode, "");
  EXPECT_EQ(s.source.kind, "");
  EXPECT_FALSE(s.source.tasks_file);
  EXPECT_EQ(s.started_at_ms, 0);
  EXPECT_FALSE(s.ended_at_ms);
  EXPECT_EQ(s.iterations, 0);
  ASSERT_TRUE(s.session);
  EXPECT_EQ(s.session->id, "");
  EXPECT_EQ(s.session->anchor_epoch, 0);
  EXPECT_FALSE(s.session->context_tokens);
  EXPECT_FALSE(s.session->context_window);
  EXPECT_EQ(s.attempts, (std::map<std::string, int>{{"b", 2}}));
  EXPECT_FALSE(s.pending_action);
  EXPECT_EQ(s.usage, (claude::TokenUsage{0, 0, 3, 0}));
  EXPECT_EQ(s.tokens_total, 0u);
  EXPECT_EQ(s.cost_usd, 0);
  EXPECT_FALSE(s.options.max_iterations);
  EXPECT_TRUE(s.task_specs.empty());
  ASSERT_EQ(s.tasks.size(), 2u);  // a task that is not an object keeps its place (tasks file order)
  EXPECT_EQ(s.tasks[0].id, "");
  EXPECT_EQ(s.tasks[1].id, "t");
  EXPECT_EQ(s.tasks[1].iterations, std::numeric_limits<int>::max());
  EXPECT_EQ(s.tasks[1].sessions, std::vector<std::string>{"s"});
  EXPECT_EQ(s.tasks[1].usage, claude::TokenUsage{});
  EXPECT_FALSE(s.tasks[1].cost_usd);
  EXPECT_FALSE(s.tasks[1].started_at_ms);
  EXPECT_FALSE(s.tasks[1].context_mode);
  ASSERT_TRUE(s.session_totals);
  ASSERT_EQ(s.session_totals->size(), 1u);
  EXPECT_EQ(s.session_totals->at("t").usage.input, 3u);
  EXPECT_EQ(s.session_totals->at("t").cost_usd, 0);
  EXPECT_FALSE(s.stopped_on);  // not an object: none
  ASSERT_TRUE(s.refused_call);
  EXPECT_EQ(s.refused_call->key, "");
  EXPECT_FALSE(s.refused_call->fresh);

  const ojson out = run_state_json(s);
  EXPECT_EQ(out["written_by"], ojson({{"version", 2}}));
  EXPECT_EQ(out["session"]["colour"], "blue");
  EXPECT_EQ(out["tasks"][1]["note"], "kept");
  EXPECT_EQ(out["ctxkit"], "run");
}

// The typed parts of a run.json (what it runs, its options, its tasks, what stopped it), as
// ctx-run writes them, written back key for key; a budget's stop and a limit's have each their
// own keys.
TEST(RunState, TheTypedPartsSurviveTheRoundTripByteForByte) {
  const ojson j = ojson::parse(R"({
    "ctxkit": "run", "version": 1, "run_id": "r1", "project": "/p", "mode": "hybrid",
    "mode_origin": "default",
    "source": {"kind": "workflow", "workflow": "/p/.ctxkit/workflows/ship.yaml", "name": "ship",
               "tasks_file": "/p/tasks.yaml"},
    "status": "stopped", "started_at_ms": 1, "ended_at_ms": 2, "iterations": 1, "session": null,
    "previous_summary": "", "attempts": {}, "pending_action": null,
    "usage": {"input": 0, "cache_creation": 0, "cache_read": 0, "output": 0},
    "tokens_total": 0, "cost_usd": 0.0,
    "options": {"max_iterations": 5, "max_task_iterations": 2, "on_fail": "skip",
                "reanchor": false, "max_tokens": 20000, "max_cost_usd": null, "fresh_at": 50,
                "compact_at": 70, "claude_bin": "/opt/claude", "claude_args": []},
    "task_specs": [{"id": "a", "title": "A", "description": "Do A.", "acceptance": ["works"],
                    "depends_on": ["b"], "done": true, "context_mode": "fresh-per-task",
                    "max_iterations": 7, "max_tokens": 100, "max_cost_usd": 0.5,
                    "owner": "kept"}],
    "tasks": [],
    "stopped_on": {"scope": "limit", "kind": "usage limit", "message": "resets 5pm",
                   "why": "on_limit stop", "reset_at": "2026-11-26T17:00:00.000Z"}
  })");
  const RunState s = run_state_from_json(j);
  EXPECT_EQ(s.source.workflow, "/p/.ctxkit/workflows/ship.yaml");
  EXPECT_EQ(s.options.on_fail, "skip");
  EXPECT_EQ(s.options.reanchor, false);
  EXPECT_EQ(s.options.max_tokens, 20000u);
  EXPECT_FALSE(s.options.max_cost_usd);
  EXPECT_EQ(s.options.claude_args, std::vector<std::string>{});
  ASSERT_EQ(s.task_specs.size(), 1u);
  const workflow::TaskSpec& spec = s.task_specs[0].spec;
  EXPECT_EQ(spec.description, "Do A.");
  EXPECT_EQ(spec.acceptance, std::vector<std::string>{"works"});
  EXPECT_EQ(spec.depends_on, std::vector<std::string>{"b"});
  EXPECT_TRUE(spec.done);
  EXPECT_EQ(spec.context_mode, "fresh-per-task");
  EXPECT_EQ(spec.max_iterations, 7);
  EXPECT_EQ(spec.max_tokens, 100u);
  EXPECT_EQ(spec.max_cost_usd, 0.5);
  EXPECT_EQ(s.task_specs[0].extra, ojson({{"owner", "kept"}}));
  ASSERT_TRUE(s.stopped_on);
  EXPECT_EQ(s.stopped_on->scope, "limit");
  EXPECT_EQ(s.stopped_on->why, "on_limit stop");
  EXPECT_FALSE(s.stopped_on->budget);
  EXPECT_EQ(written(s), j.dump(2));

  ojson budget = j;
  budget["stopped_on"] = ojson::parse(
      R"({"scope": "task", "budget": "tokens", "limit": 2000.0, "spent": 2230.0, "over": 230.0,
          "task_id": "a"})");
  const RunState b = run_state_from_json(budget);
  ASSERT_TRUE(b.stopped_on);
  EXPECT_EQ(b.stopped_on->limit, 2000);
  EXPECT_EQ(b.stopped_on->over, 230);
  EXPECT_EQ(b.stopped_on->task_id, "a");
  EXPECT_FALSE(b.stopped_on->kind);
  EXPECT_EQ(written(b), budget.dump(2));
  EXPECT_EQ(stop_json(*b.stopped_on), budget["stopped_on"]);
  EXPECT_EQ(source_json(b.source), j["source"]);
}

// The typed parts read by content: a value of another type is absent (an option absent is the
// command line's), a task spec that is no object keeps its place as an empty one, keys of a later
// version are kept.
TEST(RunState, OddValuesOfTheTypedPartsReadAsTheirDefaults) {
  const ojson odd = ojson::parse(R"({
    "ctxkit": "run", "version": 1, "run_id": "r1", "tasks": [],
    "source": {"kind": 3, "workflow": ["w"], "tasks_file": "/t.yaml", "by": "hand"},
    "options": {"max_iterations": "50", "max_task_iterations": 2.5, "on_fail": false,
                "reanchor": 1, "max_tokens": -3, "max_cost_usd": "5", "fresh_at": null,
                "compact_at": 99999999999, "claude_bin": 7, "claude_args": ["-p", 3, null]},
    "task_specs": ["t1", {"id": 2, "title": "B", "acceptance": "all", "depends_on": [1, "a"],
                          "done": "yes", "max_iterations": -1, "max_tokens": 1.5,
                          "max_cost_usd": -2}, {"id": "c", "max_iterations": 99999}],
    "stopped_on": {"scope": ["run"], "budget": 5, "limit": "lots", "spent": 3}
  })");
  RunState s;
  ASSERT_NO_THROW(s = run_state_from_json(odd));
  EXPECT_EQ(s.source.kind, "");
  EXPECT_FALSE(s.source.workflow);
  EXPECT_EQ(s.source.tasks_file, "/t.yaml");
  EXPECT_EQ(s.source.extra, ojson({{"by", "hand"}}));
  EXPECT_FALSE(s.options.max_iterations);
  EXPECT_FALSE(s.options.max_task_iterations);
  EXPECT_FALSE(s.options.on_fail);
  EXPECT_FALSE(s.options.reanchor);
  EXPECT_FALSE(s.options.max_tokens);
  EXPECT_FALSE(s.options.max_cost_usd);
  EXPECT_FALSE(s.options.fresh_at);
  EXPECT_EQ(s.options.compact_at, std::numeric_limits<int>::max());
  EXPECT_FALSE(s.options.claude_bin);
  EXPECT_EQ(s.options.claude_args, std::vector<std::string>{"-p"});
  ASSERT_EQ(s.task_specs.size(), 3u);
  EXPECT_EQ(s.task_specs[0].spec.id, "");
  const workflow::TaskSpec& b = s.task_specs[1].spec;
  EXPECT_EQ(b.id, "");
  EXPECT_EQ(b.title, "B");
  EXPECT_TRUE(b.acceptance.empty());
  EXPECT_EQ(b.depends_on, std::vector<std::string>{"a"});
  EXPECT_FALSE(b.done);
  EXPECT_EQ(b.max_iterations, 0);
  EXPECT_FALSE(b.max_tokens);
  EXPECT_FALSE(b.max_cost_usd);
  EXPECT_EQ(s.task_specs[2].spec.max_iterations, 10000);
  ASSERT_TRUE(s.stopped_on);
  EXPECT_EQ(s.stopped_on->scope, "");
  EXPECT_FALSE(s.stopped_on->budget);
  EXPECT_FALSE(s.stopped_on->limit);
  EXPECT_EQ(s.stopped_on->spent, 3);

  const ojson out = run_state_json(s);
  EXPECT_EQ(out["source"], ojson::parse(R"({"tasks_file": "/t.yaml", "by": "hand"})"));
  EXPECT_EQ(out["task_specs"][0], ojson::parse(R"({"id": "", "title": ""})"));
  EXPECT_TRUE(out["options"]["max_tokens"].is_null());
}

// One table of keys per object: every key written is read back as a known key (none lands in
// `extra`), and the keys come in the documented order.
TEST(RunState, EveryKeyItWritesItReadsBackAsItsOwn) {
  RunState s = run_state_from_json(ojson::parse(kWrittenRunJson));
  s.stopped_on = StopRecord{};
  s.stopped_on->scope = "run";
  s.stopped_on->budget = "tokens";
  s.stopped_on->limit = 1;
  s.stopped_on->spent = 2;
  s.stopped_on->over = 1;
  s.stopped_on->task_id = "t";
  s.stopped_on->kind = "k";
  s.stopped_on->message = "m";
  s.stopped_on->why = "w";
  s.stopped_on->reset_at = "r";
  s.source.workflow = "w";
  s.source.name = "n";
  s.task_specs[0].spec.description = "d";
  s.task_specs[0].spec.acceptance = {"a"};
  s.task_specs[0].spec.depends_on = {"b"};
  s.task_specs[0].spec.done = true;
  s.task_specs[0].spec.context_mode = "auto";
  s.task_specs[0].spec.max_iterations = 2;
  s.task_specs[0].spec.max_tokens = 3;
  s.task_specs[0].spec.max_cost_usd = 4;
  s.options.max_tokens = 5;
  const ojson j = run_state_json(s);
  const RunState back = run_state_from_json(j);
  EXPECT_TRUE(back.extra.empty()) << back.extra.dump();
  EXPECT_TRUE(back.source.extra.empty()) << back.source.extra.dump();
  EXPECT_TRUE(back.options.extra.empty()) << back.options.extra.dump();
  EXPECT_TRUE(back.task_specs[0].extra.empty()) << back.task_specs[0].extra.dump();
  EXPECT_TRUE(back.stopped_on->extra.empty()) << back.stopped_on->extra.dump();
  EXPECT_TRUE(back.session->extra.empty()) << back.session->extra.dump();
  EXPECT_TRUE(back.tasks[0].extra.empty()) << back.tasks[0].extra.dump();
  EXPECT_EQ(written(back), j.dump(2));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(
      keys,
      (std::vector<std::string>{
          "ctxkit",      "version",        "run_id",           "project",       "mode",
          "mode_origin", "source",         "status",           "started_at_ms", "ended_at_ms",
          "iterations",  "session",        "previous_summary", "attempts",      "pending_action",
          "usage",       "tokens_total",   "cost_usd",         "options",       "task_specs",
          "tasks",       "session_totals", "stopped_on",       "refused_call"}));
  std::vector<std::string> stop_keys;
  for (auto it = j["stopped_on"].begin(); it != j["stopped_on"].end(); ++it)
    stop_keys.push_back(it.key());
  EXPECT_EQ(stop_keys, (std::vector<std::string>{"scope", "budget", "limit", "spent", "over",
                                                 "task_id", "kind", "message", "why", "reset_at"}));
}

// A task's status and a pending action are words in run.json: each word reads as its own value;
// a word this version does not know reads as pending (the run comes back to the task), and a
// pending action that does not say "clear" as a compaction.
TEST(RunState, StatusesAndActionsAreReadFromTheirWords) {
  for (auto st : {TaskStatus::Pending, TaskStatus::Running, TaskStatus::Done, TaskStatus::Skipped,
                  TaskStatus::Failed})
    EXPECT_EQ(parse_task_status(to_string(st)), st);
  EXPECT_FALSE(parse_task_status("blocked"));
  EXPECT_TRUE(is_finished(TaskStatus::Skipped));
  EXPECT_FALSE(is_finished(TaskStatus::Running));
  const ojson j = ojson::parse(R"({"ctxkit": "run", "version": 1,
    "tasks": [{"id": "a", "status": "blocked"}, {"id": "b", "status": "skipped"},
              {"id": "c", "status": 3}],
    "pending_action": {"key": "k", "action": "clear", "focus": ""}})");
  RunState s = run_state_from_json(j);
  ASSERT_EQ(s.tasks.size(), 3u);
  EXPECT_EQ(s.tasks[0].status, TaskStatus::Pending);
  EXPECT_EQ(s.tasks[1].status, TaskStatus::Skipped);
  EXPECT_EQ(s.tasks[2].status, TaskStatus::Pending);
  ASSERT_TRUE(s.pending_action);
  EXPECT_EQ(s.pending_action->action, workflow::ContextAction::Clear);
  EXPECT_EQ(run_state_json(s)["pending_action"]["action"], "clear");
  s = run_state_from_json(ojson::parse(
      R"({"ctxkit": "run", "version": 1, "pending_action": {"key": "k", "action": "squash"}})"));
  ASSERT_TRUE(s.pending_action);
  EXPECT_EQ(s.pending_action->action, workflow::ContextAction::Compact);
}

TEST(RunState, ReadsTextThatIsNoObjectAsAnEmptyState) {
  for (const char* text : {"null", "[]", "\"run\"", "3"}) {
    RunState s;
    ASSERT_NO_THROW(s = run_state_from_json(ojson::parse(text))) << text;
    EXPECT_EQ(s.run_id, "") << text;
    EXPECT_TRUE(s.tasks.empty()) << text;
    EXPECT_FALSE(s.session) << text;
  }
}

// Through the run folder: saved, loaded, the same state; the file as read_json gives it.
TEST(RunState, ARunFolderSavesAndLoadsTheState) {
  test::TempDir tmp;
  const fs::path folder = tmp / "proj/.ctxkit/runs/20261126T063000.123Z-a1b2c3";
  RunRecord rec(folder, run_state_from_json(ojson::parse(kWrittenRunJson)));
  ASSERT_TRUE(rec.create());
  EXPECT_EQ(test::read_file(folder / "run.json"), std::string(kWrittenRunJson) + "\n");
  auto loaded = RunRecord::load(folder);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(written(loaded->state), written(rec.state));
  auto raw = RunRecord::read_json(folder);
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->dump(2), ojson::parse(kWrittenRunJson).dump(2));
}

TEST(RunState, ARunFolderWhoseRunJsonIsNotARunIsRefused) {
  test::TempDir tmp;
  const fs::path folder = tmp / "proj/.ctxkit/runs/r1";
  tmp.write("proj/.ctxkit/runs/r1/run.json", R"({"ctxkit": "run", "version": 1, "run_id": "r1"})");
  EXPECT_FALSE(RunRecord::load(folder)) << "no tasks array";
  tmp.write("proj/.ctxkit/runs/r1/run.json",
            R"({"ctxkit": "run", "version": 1, "run_id": "r2", "tasks": []})");
  EXPECT_FALSE(RunRecord::load(folder)) << "another run's id";
  tmp.write("proj/.ctxkit/runs/r1/run.json",
            R"({"ctxkit": "run", "version": 1, "run_id": "r1", "tasks": []})");
  EXPECT_TRUE(RunRecord::load(folder));
}

}  // namespace
}  // namespace ctxkit::runner
