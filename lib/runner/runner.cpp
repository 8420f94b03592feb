#include "runner/runner.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "claude/claude_cli.hpp"
#include "claude/limit_answer.hpp"
#include "claude/session_locator.hpp"
#include "claude/stream_result.hpp"
#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "runner/client_call.hpp"
#include "runner/dry_run.hpp"
#include "runner/git_snapshot.hpp"
#include "runner/run_record.hpp"
#include "runner/run_setup.hpp"
#include "runner/summary.hpp"
#include "runner/workflow_driver.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/one_line.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

namespace {

std::string budget_text(const std::string& which, double v) {
  return which == "cost" ? fmt::format("${:.4f}", v) : fmt::format("{:.0f} tokens", v);
}

// ------------------------------------------------------------------------------------------
class Runner {
 public:
  Runner(const RunOptions& o, RunEnvironment& w) : opts_(o), w_(w) {}

  RunOutcome start() {
    auto setup = set_up_new_run(opts_, w_.env);
    if (!setup) return bad_input(setup.error().message);
    take(std::move(*setup));
    if (opts_.dry_run) return dry_run();
    if (!opts_.workflow.empty()) driver_.emplace(opts_, w_.env, w_.locations, specs_);
    if (auto r = record_.create(); !r) return bad_input(r.error().message);
    if (auto r = record_.lock(); !r) return bad_input(r.error().message);
    open_store();
    emit("run_started", {{"mode", std::string(to_string(opts_.mode))},
                         {"mode_origin", opts_.mode_origin},
                         {"source", source_json(record_.state.source)},
                         {"tasks", record_.state.tasks.size()}});
    return loop();
  }

  RunOutcome resume() {
    auto setup =
        set_up_resumed_run(opts_, w_.env, [this](const std::string& line) { progress(line); });
    if (!setup) return bad_input(setup.error().message);
    take(std::move(*setup));
    auto& st = record_.state;
    st.stopped_on.reset();
    if (!opts_.workflow.empty()) driver_.emplace(opts_, w_.env, w_.locations, specs_);
    open_store();
    st.status = "running";
    emit("run_resumed", {{"iterations", st.iterations}});
    return loop();
  }

 private:
  // --------------------------------------------------------------------------------------
  void take(RunSetup setup) {
    record_ = std::move(setup.record);
    specs_ = std::move(setup.specs);
    workflow_name_ = std::move(setup.workflow_name);
    summaries_wanted_ = setup.summaries_wanted;
  }

  static RunOutcome bad_input(const std::string& what) {
    RunOutcome out;
    out.end = RunEnd::BadInput;
    out.why = what;
    return out;
  }

  void open_store() {
    auto s = store::StateStore::open(w_.locations.state_db(), opts_.busy_timeout_ms);
    if (!s) {
      progress(fmt::format(
          "note: the state database is not available ({}); events go to the run folder only",
          s.error().message));
      return;
    }
    store_.emplace(std::move(*s));
  }

  // Records an event: one JSON line in the run folder and a row in the state database.
  void emit(const std::string& kind, ojson data) {
    ojson ev = {{"event", kind},
                {"run_id", record_.state.run_id},
                {"at", util::format_iso8601_ms(util::now_ms())}};
    for (auto& [k, v] : data.items()) ev[k] = v;
    const std::string line = util::dump_json(ev, -1, util::BadUtf8::replace);
    if (auto r = record_.append_event(line); !r) progress("note: " + r.error().message);
    if (store_) {
      if (auto r = store_->append_event({util::now_ms(), "run", record_.state.run_id, kind, line});
          !r) {
        progress("note: " + r.error().message);
        store_.reset();
      }
    }
    progress_event(kind, ev);
  }

  // One line on stderr: text from outside (the model's BLOCKED reason, task titles, paths) has its
  // control characters escaped, so it can neither break the line nor drive the terminal.
  void progress(const std::string& line) {
    util::print_note(w_.err, "ctx-run", line);
    w_.err << std::flush;
  }

  void progress_event(const std::string& kind, const ojson& ev) {
    if (kind == "iteration") {
      progress(fmt::format("task {} of {} ({}), iteration {}, session {}, {} tokens so far",
                           task_number_, task_count(), ev.value("task_id", ""),
                           ev.value("task_iteration", 0), ev.value("session_id", ""),
                           record_.state.tokens_total));
    } else {
      std::string detail;
      for (const char* k :
           {"task_id", "scope", "budget", "decision", "why", "status", "reason", "focus"})
        if (ev.contains(k) && ev[k].is_string() && !ev[k].get<std::string>().empty())
          detail += fmt::format(" {}={}", k, ev[k].get<std::string>());
      for (const char* k : {"percent", "threshold", "spent", "limit", "over"})
        if (ev.contains(k) && ev[k].is_number())
          detail += fmt::format(" {}={}", k, util::dump_json(ev[k]));
      progress(kind + detail);
    }
  }

  size_t task_count() const {
    return opts_.workflow.empty() ? specs_.size() : record_.state.tasks.size();
  }

  // --------------------------------------------------------------------------------------
  // The plan of the run on world.out (print_dry_run), each task's anchor made as its fresh
  // session would get it.
  RunOutcome dry_run() {
    print_dry_run(w_.out, opts_, specs_, workflow_name_,
                  [this](const workflow::TaskSpec& s, ContextMode mode) {
                    mode_ = mode;
                    return make_anchor(s, "", "(the previous task's summary)");
                  });
    return {};
  }

  // --------------------------------------------------------------------------------------
  std::string make_anchor(const workflow::TaskSpec& task, const std::string& workflow_text,
                          const std::string& summary) {
    AnchorInputs in;
    in.project = opts_.project;
    in.files = opts_.anchor_files;
    // A session that spans tasks (continuous, auto) is not anchored to one of them.
    const bool one_task = mode_ != ContextMode::Continuous && mode_ != ContextMode::Auto;
    in.include_task = one_task;
    in.task = task.id.empty() ? std::string() : task_text(task);
    in.workflow = one_task ? workflow_text : std::string();
    in.progress_file = opts_.progress_file;
    in.files_anywhere = opts_.anchor_files_anywhere;
    in.progress_anywhere = opts_.progress_file_anywhere;
    in.progress_lines = static_cast<size_t>(opts_.progress_lines);
    in.summary = carries_summary(mode_) ? summary : std::string();
    in.sources = opts_.sources;
    if (in.sources.git) in.git_state = render_git_state(git_.get(opts_.project));
    in.max_bytes = static_cast<size_t>(opts_.anchor_max_tokens) * 4;
    return without_nul(build_runner_anchor(in));
  }

  // Whether git's answers may be needed after a call: for a fresh session's anchor (any mode
  // but continuous, or a workflow's clear) or a hybrid task's summary.
  bool git_wanted() const {
    return (mode_ != ContextMode::Continuous || driver_) &&
           ((opts_.reanchor && opts_.sources.git) || summaries_wanted_);
  }

  // One client call. What git knew before it is forgotten; when git_wanted(), git is asked again
  // as soon as the client prints its result (`since`: the current task's first commit, for a
  // summary), so that it runs while the client is still exiting.
  Result<CallResult> invoke(const std::vector<std::string>& argv, const std::string& since = {}) {
    git_.clear();
    const bool want_git = git_wanted();
    auto c = invoke_client(
        argv, opts_.project, {opts_.exit_grace_seconds, opts_.call_timeout_seconds},
        [&] {
          if (want_git) git_.start(opts_.project, since);
        },
        [this](const std::string& line) { progress(line); });
    if (c) take_session_share(c->stream);
    return c;
  }

  // From 2.1.277 the client reports the whole session's tokens and cost in each result: keep what
  // each session has reported (in run.json, so a --resume knows it too) and count the call's share.
  void take_session_share(claude::StreamResult& stream) {
    if (!stream.has_result || stream.session_id.empty()) return;
    auto& all = record_.state.session_totals;
    if (!all) all.emplace();
    std::optional<claude::SessionTotals> before;
    if (auto it = all->find(stream.session_id); it != all->end()) before = it->second;
    (*all)[stream.session_id] = claude::take_call_share(stream, before);
  }

  // The task record of `key` (created on first use in workflow runs), by its index.
  size_t task_record(const std::string& key, const std::string& title) {
    auto& tasks = record_.state.tasks;
    for (size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].id == key) return i;
    tasks.push_back(TaskRecord::make(key, title, TaskStatus::Pending));
    return tasks.size() - 1;
  }

  // Counts a call's tokens and cost to its task and the run.
  void add_call(TaskRecord& task, const claude::StreamResult& r) {
    auto& st = record_.state;
    task.usage += r.usage;
    st.usage += r.usage;
    st.tokens_total = st.usage.total();
    task.cost_usd = task.cost_usd.value_or(0) + r.cost_usd;
    st.cost_usd += r.cost_usd;
  }

  // Saves run.json and the run's row.
  void save() {
    if (auto r = record_.save(); !r) progress("note: " + r.error().message);
    if (store_) {
      const auto& st = record_.state;
      store::RunRow row;
      row.run_id = st.run_id;
      row.project = st.project;
      row.folder = record_.folder().string();
      row.mode = st.mode;
      row.status = st.status;
      row.started_at_ms = st.started_at_ms;
      row.ended_at_ms = st.ended_at_ms;
      row.totals =
          util::dump_json(ojson{{"usage", usage_json(st.usage)}, {"iterations", st.iterations}});
      if (auto r = store_->put_run(row); !r) progress("note: " + r.error().message);
    }
  }

  RunOutcome finish(RunEnd end, const std::string& why = {}) {
    const std::string status(run_status(end));
    auto& st = record_.state;
    st.status = status;
    st.ended_at_ms = util::now_ms();
    ojson data = {
        {"status", status}, {"iterations", st.iterations}, {"usage", usage_json(st.usage)}};
    if (!why.empty()) data["reason"] = why;
    emit("run_ended", data);
    save();
    RunOutcome out;
    out.end = end;
    out.why = why;
    out.run_id = st.run_id;
    out.status = status;
    out.folder = record_.folder();
    if (st.stopped_on) {
      out.stopped_scope = st.stopped_on->scope;
      out.stopped_budget = st.stopped_on->budget.value_or("");
    }
    return out;
  }

  bool interrupted() const { return w_.interrupted && w_.interrupted(); }

  // A STOP request: a regular file named STOP in the run folder, consumed here. Anything else of
  // that name (a directory, a link) is not a request: it could not be consumed and would stop
  // every --resume at once. It is named once and ignored.
  bool stop_requested() {
    const fs::path stop = record_.folder() / "STOP";
    struct stat st {};
    if (::lstat(stop.c_str(), &st) != 0) return false;
    if (!S_ISREG(st.st_mode)) {
      if (!stop_noted_)
        progress(fmt::format("note: {} is not a regular file: ignored (a STOP request is a file)",
                             stop.string()));
      stop_noted_ = true;
      return false;
    }
    std::error_code ec;
    fs::remove(stop, ec);
    if (ec) progress(fmt::format("note: removing {}: {}", stop.string(), ec.message()));
    return true;
  }

  // Between iterations: STOP ends the run (the file is consumed), PAUSE waits while it exists.
  std::optional<RunOutcome> control() {
    std::error_code ec;
    if (stop_requested()) return finish(RunEnd::Stopped, "STOP file");
    if (fs::exists(record_.folder() / "PAUSE", ec)) {
      record_.state.status = "paused";
      emit("run_paused", {{"reason", "PAUSE file"}});
      save();
      const int64_t t_pause = util::now_ms();
      while (fs::exists(record_.folder() / "PAUSE", ec)) {
        if (interrupted()) return finish(RunEnd::Interrupted, "SIGINT");
        if (stop_requested()) return finish(RunEnd::Stopped, "STOP file");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      const int64_t paused = util::now_ms() - t_pause;
      paused_ms_ += paused;  // not the runner's work
      git_.clear();          // the work tree may have changed meanwhile
      record_.state.status = "running";
      emit("run_unpaused", {{"paused_ms", paused}});
    }
    if (interrupted()) return finish(RunEnd::Interrupted, "SIGINT");
    return std::nullopt;
  }

  // The next position of a tasks-file run.
  Position next_task_position() {
    Position p;
    const auto& tasks = record_.state.tasks;
    for (size_t i = 0; i < tasks.size() && i < specs_.size(); ++i) {
      if (is_finished(tasks[i].status)) continue;
      const auto& s = specs_[i];
      p.key = p.task_key = s.id;
      p.title = s.title;
      p.work = task_text(s);
      p.on_fail = opts_.on_fail;
      p.mode = task_mode(opts_.mode, parse_context_mode(s.context_mode));
      p.max_attempts = s.max_iterations > 0 ? s.max_iterations : opts_.max_task_iterations;
      p.budget = {s.max_tokens && *s.max_tokens > 0 ? s.max_tokens : std::nullopt,
                  s.max_cost_usd && *s.max_cost_usd > 0 ? s.max_cost_usd : std::nullopt};
      task_number_ = i + 1;
      current_spec_ = s;
      return p;
    }
    p.finished = true;
    return p;
  }

  // Ends a task: its event, its summary (kept for hybrid's next anchor).
  void end_task(TaskRecord& task, TaskStatus status, const std::string& final_text,
                const std::string& reason) {
    const int64_t now = util::now_ms();
    task.status = status;
    task.ended_at_ms = now;
    task.wall_ms = now - task.started_at_ms.value_or(now);
    if (!reason.empty()) task.reason = reason;
    ojson data = {{"context_mode", task.context_mode.value_or(std::string(to_string(opts_.mode)))},
                  {"task_id", task.id},
                  {"iterations", task.iterations},
                  {"tokens_used", task.usage.total()},
                  {"usage", usage_json(task.usage)},
                  {"context_resets", task.resets},
                  {"compactions", task.compactions},
                  {"anchoring_tokens", task.anchoring_tokens},
                  {"anchoring_tokens_measure",
                   "estimate: anchor UTF-8 bytes / 4, once per session started or re-anchored"},
                  {"wall_ms", task.wall_ms}};
    if (!reason.empty()) data["reason"] = reason;
    if (task.cost_usd) data["cost_usd"] = *task.cost_usd;
    emit(status == TaskStatus::Done      ? "task_completed"
         : status == TaskStatus::Skipped ? "task_skipped"
                                         : "task_failed",
         data);
    // Summaries are hybrid mode's: the next task's anchor carries them. (Gathering one asks git
    // twice, which the other modes do not pay for.)
    if (summaries_wanted_) write_task_summary(task, final_text, reason);
  }

  void write_task_summary(const TaskRecord& task, const std::string& final_text,
                          const std::string& reason) {
    SummaryInputs si;
    si.task_id = task.id;
    si.title = task.title;
    si.status = to_string(task.status);
    si.final_message = final_text;
    si.blocked_reason = reason;
    si.files_changed = changed_files(git_.get(opts_.project, task.git_head.value_or("")));
    if (auto f = project_file(opts_.project, opts_.progress_file, opts_.progress_file_anywhere))
      si.progress_tail = file_tail(*f, 200);
    const std::string summary =
        build_task_summary(si, static_cast<size_t>(opts_.summary_max_lines));
    record_.state.previous_summary = summary;
    if (auto r = record_.write_file("task_summary.md", summary); !r)
      progress("note: " + r.error().message);
    if (auto r = record_.write_file(
            fmt::format("tasks/{}/summary.md", RunRecord::safe_name(task.id)), summary);
        !r)
      progress("note: " + r.error().message);
    emit("summary_written",
         {{"task_id", task.id}, {"lines", std::count(summary.begin(), summary.end(), '\n')}});
  }

  // --------------------------------------------------------------------------------------
  // One call of the loop, as its steps build it.
  struct Step {
    Position pos;
    size_t task = 0;  // its task: record_.state.tasks[task]
    bool new_task = false;
    int attempt = 1;  // of the position, toward its max_attempts
    SessionPlan plan;
    std::string focus;       // of a compaction before the call
    std::string session_id;  // the call's session
    std::string anchor;      // the session's anchor, as the call gets it
    int n = 0;               // the run's iteration this call is
    std::string stem;        // tasks/<task>/iter-NNN, its records
    int64_t client_ms = 0;   // the client's time in the calls of this step
  };

  TaskRecord& task_of(const Step& s) { return record_.state.tasks[s.task]; }

  // Each pass: the next position, the run's end or budgets, the task's start, the session plan
  // (auto's decision among it), a compaction, the session, the call, its record, and what
  // follows from it.
  RunOutcome loop() {
    if (auto end = begin_loop()) return *end;
    while (true) {
      if (auto end = control()) return *end;
      auto pos = next_position();
      if (!pos) return finish(RunEnd::Failed, pos.error().message);
      if (auto end = end_before_call(*pos)) return *end;
      Step step = enter_position(std::move(*pos));
      if (auto end = check_budgets(task_of(step), step.pos.budget)) return *end;
      start_task(task_of(step));
      plan_call(step);
      if (auto end = compact(step)) return *end;
      open_session(step);
      auto call = make_call(step);
      if (!call) return finish(RunEnd::Failed, call.error().message);
      // A call that ended on a limit is no attempt: the run waits (or stops), then makes it again.
      if (auto limit = claude::classify_limit(call->stream, call->stderr_tail, call->exit_code,
                                              util::now_ms() / 1000)) {
        if (auto end = after_limit(step, *call, *limit)) return *end;
        continue;
      }
      const ParsedReport report = record_call(step, *call);
      if (auto end = after_call(step, *call, report)) return *end;
      save();
      if (interrupted()) return finish(RunEnd::Interrupted, "SIGINT");
    }
  }

  std::optional<RunOutcome> begin_loop() {
    if (driver_) {
      if (auto r = driver_->ensure_started(); !r) return finish(RunEnd::Failed, r.error().message);
    }
    last_task_key_ = record_.state.session ? record_.state.session->task_key : "";
    cfg_ = core::load_config(w_.env, {opts_.project});
    compaction_ = context::client_compaction_settings(w_.env, opts_.project);
    for (size_t i = 0; i + 1 < opts_.claude_args.size(); ++i)
      if (opts_.claude_args[i] == "--model") model_ = opts_.claude_args[i + 1];
    last_iteration_ms_ = util::now_ms();
    return std::nullopt;
  }

  Result<Position> next_position() {
    Position pos;
    if (driver_ && pending_position_) {
      pos = std::move(*pending_position_);
      pending_position_.reset();
    } else if (driver_) {
      auto p = driver_->position(record_.state.session_id(), w_.env, cfg_);
      if (!p) return std::unexpected(p.error());
      pos = std::move(*p);
    } else {
      pos = next_task_position();
    }
    if (driver_) carry_pending_action(pos);
    return pos;
  }

  // An action handed out before a stop (run.json keeps it) is still carried out on resume.
  void carry_pending_action(Position& pos) {
    auto& pa = record_.state.pending_action;
    if (pos.action != workflow::ContextAction::None) {
      pa = PendingAction{pos.key, pos.action, pos.focus};
      save();
    } else if (pa && pa->key == pos.key) {
      pos.action = pa->action;
      pos.focus = pa->focus;
    }
  }

  std::optional<RunOutcome> end_before_call(const Position& pos) {
    if (pos.finished) {
      if (pos.workflow_failed) return finish(RunEnd::Failed, "the workflow failed");
      return finish(RunEnd::Completed);
    }
    // Checked once the position is known: a run whose last task ends on the last allowed
    // iteration is complete, not stopped. (An action taken above is kept in run.json.)
    if (record_.state.iterations >= opts_.max_iterations)
      return finish(RunEnd::Stopped, "max_iterations reached");
    return std::nullopt;
  }

  Step enter_position(Position pos) {
    Step s;
    s.pos = std::move(pos);
    s.task = task_record(s.pos.task_key, s.pos.title);
    if (driver_) task_number_ = s.task + 1;
    s.new_task = s.pos.task_key != last_task_key_;
    mode_ = s.pos.mode;
    if (mode_ == opts_.mode) take_back_run_session();
    return s;
  }

  // A task in the run's mode goes on in the run's own session: the one a task in a mode of its
  // own put aside when it started sessions of its own is taken back (its anchor, its context for
  // auto). Anchor files keep their numbers: the next one follows the last one written.
  void take_back_run_session() {
    auto& st = record_.state;
    if (!st.run_session) return;
    SessionRecord back = std::move(*st.run_session);
    st.run_session.reset();
    if (st.session) back.anchor_epoch = std::max(back.anchor_epoch, st.session->anchor_epoch);
    st.session = std::move(back);
    session_anchor_loaded_ = false;
    if (!st.session->id.empty()) emit("session_taken_back", {{"session_id", st.session->id}});
  }

  // Before a task in a mode of its own starts a session of its own: the run's session is put
  // aside (once) for the next task in the run's mode.
  void put_aside_run_session() {
    auto& st = record_.state;
    if (mode_ == opts_.mode || st.run_session) return;
    st.run_session = st.session.value_or(SessionRecord{});
  }

  void start_task(TaskRecord& task) {
    if (task.status != TaskStatus::Pending) return;
    task.status = TaskStatus::Running;
    task.started_at_ms = util::now_ms();
    task.context_mode = to_string(mode_);
    if (summaries_wanted_)
      if (auto head = git_.get(opts_.project).head; !head.empty()) task.git_head = head;
    ojson started = {{"task_id", task.id}, {"title", task.title}};
    if (mode_ != opts_.mode) started["context_mode"] = std::string(to_string(mode_));
    emit("task_started", started);
  }

  // The attempt, and the session plan of the call: a call a limit refused is made again as it
  // was; else the mode (auto with its decision) and the workflow's action decide.
  void plan_call(Step& s) {
    auto& st = record_.state;
    s.session_id = st.session_id();
    // Retry unit: one position; its attempts count toward max_task_iterations.
    const auto made = st.attempts.find(s.pos.key);
    s.attempt = (made != st.attempts.end() ? made->second : 0) + 1;
    const bool clear = s.pos.action == workflow::ContextAction::Clear;
    const bool compact = s.pos.action == workflow::ContextAction::Compact;
    // The call a limit refused (run.json keeps it for a --resume) is the next one.
    std::optional<bool> refused_fresh;
    if (st.refused_call && st.refused_call->key == s.pos.key)
      refused_fresh = st.refused_call->fresh;
    const bool repeat = refused_fresh.has_value();
    st.refused_call.reset();
    const AutoAction auto_action = !repeat && mode_ == ContextMode::Auto && !s.session_id.empty()
                                       ? auto_decision(task_of(s), s.new_task)
                                       : AutoAction::Keep;
    // The call a limit refused is made again as it was: in its session (started already when the
    // client wrote its transcript), with its anchor, without a compaction in between.
    s.plan = repeat ? repeat_plan(s.session_id, *refused_fresh)
                    : plan_session(mode_, !s.session_id.empty(), s.new_task, clear, compact,
                                   auto_action);
    // The user's [compact] at, in every mode that keeps a session from one call to the next.
    if (!repeat && !s.session_id.empty() && !s.plan.fresh && !s.plan.compact &&
        compact_at_reached(task_of(s)))
      apply_compact_at(s.plan, cfg_.compact.action == "rollover");
    // Auto and [compact] at compact with the task as the focus (the PreCompact hook adds the
    // pins); a workflow with its own.
    s.focus = s.plan.compact_why == "auto" || s.plan.compact_why == "[compact] at"
                  ? bounded_text(without_nul(s.pos.work), 2000)
                  : s.pos.focus;
  }

  // /compact <focus> on the session, with the session's own anchor so the prompt cache holds;
  // after a compaction the session is re-anchored.
  std::optional<RunOutcome> compact(Step& s) {
    if (s.plan.compact_skipped)
      emit("compact_skipped",
           {{"task_id", task_of(s).id}, {"reason", "the call starts a fresh session"}});
    if (!s.plan.compact) return std::nullopt;
    const std::string old_anchor = read_session_anchor();
    std::vector<std::string> extra = base_args(opts_.claude_args);
    if (!old_anchor.empty()) {
      extra.push_back("--append-system-prompt");
      extra.push_back(old_anchor);
    }
    auto argv = claude::compact_argv(opts_.claude_bin, extra, s.session_id, without_nul(s.focus));
    // A compaction a limit refused is made again once the limit is waited out (or the run stops,
    // and a --resume plans it again): the call it prepares needs it.
    std::optional<CallResult> r;
    while (true) {
      auto made = invoke(argv, task_of(s).git_head.value_or(""));
      if (!made) return finish(RunEnd::Failed, made.error().message);
      s.client_ms += made->client_ms;
      add_call(task_of(s), made->stream);
      auto limit = claude::classify_limit(made->stream, made->stderr_tail, made->exit_code,
                                          util::now_ms() / 1000);
      if (!limit) {
        r = std::move(*made);
        break;
      }
      const std::string stem =
          fmt::format("tasks/{}/iter-{:03}.compact", RunRecord::safe_name(s.pos.task_key),
                      record_.state.iterations + 1);
      if (auto end = wait_for_limit(task_of(s), s.session_id, stem, *made, *limit, "compaction"))
        return end;
      last_iteration_ms_ = util::now_ms();
      paused_ms_ = 0;
    }
    limits_in_a_row_ = 0;
    TaskRecord& task = task_of(s);
    ojson data = {{"task_id", task.id},
                  {"session_id", s.session_id},
                  {"focus", s.focus},
                  {"why", s.plan.compact_why}};
    if (!r->stream.compacted) {
      // The client compacted nothing (it answers "Not enough messages to compact." on a short
      // session, with exit 0): not a compaction; the session goes on with its own anchor.
      data["reason"] = util::one_line(r->stream.text);
      data["usage"] = usage_json(r->stream.usage);
      data["exit_code"] = r->exit_code;
      emit("compact_failed", data);
      s.anchor = old_anchor;
      return std::nullopt;
    }
    ++task.compactions;
    data["usage"] = usage_json(r->stream.usage);
    data["exit_code"] = r->exit_code;
    data["boundary"] = true;
    emit("compacted", data);
    // Re-anchor after the compaction: a new anchor epoch for this session.
    s.anchor = new_anchor(s);
    set_session(s.session_id, s.pos.task_key, s.anchor);
    count_anchor(task, s.anchor);
    return std::nullopt;
  }

  std::string new_anchor(const Step& s) {
    return opts_.reanchor
               ? make_anchor(current_spec_, s.pos.workflow_text, record_.state.previous_summary)
               : "";
  }

  static void count_anchor(TaskRecord& task, const std::string& anchor) {
    if (!anchor.empty()) task.anchoring_tokens += estimate_tokens(anchor.size());
  }

  // The session of the call: a fresh one (with a new anchor), or the current one with its anchor.
  void open_session(Step& s) {
    TaskRecord& task = task_of(s);
    if (s.plan.fresh && s.plan.reason == "repeat") {
      s.anchor = read_session_anchor();
    } else if (s.plan.fresh) {
      put_aside_run_session();
      s.session_id = util::random_uuid();
      s.anchor = new_anchor(s);
      if (s.plan.reason != "start") {
        ++task.resets;
        emit("context_reset",
             {{"task_id", task.id}, {"why", s.plan.reason}, {"session_id", s.session_id}});
      }
      set_session(s.session_id, s.pos.task_key, s.anchor);
      count_anchor(task, s.anchor);
      emit("session_started", {{"task_id", task.id},
                               {"session_id", s.session_id},
                               {"reason", s.plan.reason},
                               {"anchor_bytes", s.anchor.size()}});
    } else if (!s.plan.compact) {
      s.anchor = read_session_anchor();
    }
    if (s.pos.action == workflow::ContextAction::Clear)
      emit("workflow_action_executed",
           {{"task_id", task.id}, {"action", "clear"}, {"session_id", s.session_id}});
  }

  // The call: its prompt recorded first, then the client.
  Result<CallResult> make_call(Step& s) {
    auto& st = record_.state;
    if (driver_ && s.pos.action != workflow::ContextAction::None) st.pending_action.reset();
    const std::string prompt =
        call_prompt(s.pos.work, s.attempt, s.pos.max_attempts, driver_.has_value());
    auto argv = call_argv(opts_.claude_bin, opts_.claude_args, s.plan.fresh, s.session_id, s.anchor,
                          prompt);
    s.n = st.iterations + 1;
    s.stem = fmt::format("tasks/{}/iter-{:03}", RunRecord::safe_name(s.pos.task_key), s.n);
    if (auto r = record_.write_file(s.stem + ".prompt.md", prompt); !r)
      progress("note: " + r.error().message);
    auto r = invoke(argv, task_of(s).git_head.value_or(""));
    if (r) s.client_ms += r->client_ms;
    return r;
  }

  // A call that ended on a limit: its tokens counted, kept as the call to make again (before the
  // wait: a run stopped while waiting makes it first on --resume), then the wait.
  std::optional<RunOutcome> after_limit(const Step& s, const CallResult& call,
                                        const claude::LimitAnswer& limit) {
    add_call(task_of(s), call.stream);
    record_.state.refused_call = RefusedCall{s.pos.key, s.plan.fresh};
    if (auto end = wait_for_limit(task_of(s), s.session_id, s.stem, call, limit)) return end;
    last_iteration_ms_ = util::now_ms();
    paused_ms_ = 0;
    return std::nullopt;
  }

  // Records the call: the run's and the task's counts, the session's context (for auto's next
  // decision), the result file, the iteration event; run.json saved.
  ParsedReport record_call(Step& s, const CallResult& call) {
    auto& st = record_.state;
    limits_in_a_row_ = 0;
    if (!st.session) st.session.emplace();
    if (!call.stream.session_id.empty() && call.stream.session_id != s.session_id) {
      // The client may hand out another id (it never does for --session-id/--resume today).
      s.session_id = call.stream.session_id;
      st.session->id = s.session_id;
    }
    last_task_key_ = s.pos.task_key;
    st.session->context_tokens = call.stream.last_context;
    st.session->context_window = call.stream.context_window;
    // Where the client compacts depends on its release and the model it resolved (an alias such
    // as "opus" given with --model is resolved by the client): both as its init event names them.
    if (!call.stream.client_version.empty()) client_version_ = call.stream.client_version;
    if (!call.stream.model.empty()) session_model_ = call.stream.model;
    st.iterations = s.n;
    st.attempts[s.pos.key] = s.attempt;
    TaskRecord& task = task_of(s);
    ++task.iterations;
    add_call(task, call.stream);
    if (std::find(task.sessions.begin(), task.sessions.end(), s.session_id) == task.sessions.end())
      task.sessions.push_back(s.session_id);
    const ParsedReport report = parse_task_report(call.stream.text);
    const char* said = report.report == TaskReport::Done      ? "done"
                       : report.report == TaskReport::Blocked ? "blocked"
                                                              : "none";
    write_result(s, call, said);
    // Everything since the last iteration was recorded (closing its task, this task's start,
    // the anchor, the records) but the client's calls.
    const int64_t now = util::now_ms();
    const int64_t runner_ms = now - last_iteration_ms_ - s.client_ms - paused_ms_;
    last_iteration_ms_ = now;
    paused_ms_ = 0;
    emit("iteration", {{"task_id", task.id},
                       {"position", s.pos.key},
                       {"iteration", s.n},
                       {"task_iteration", s.attempt},
                       {"session_id", s.session_id},
                       {"fresh", s.plan.fresh},
                       {"exit_code", call.exit_code},
                       {"report", said},
                       {"usage", usage_json(call.stream.usage)},
                       {"cost_usd", call.stream.cost_usd},
                       {"context_tokens", call.stream.last_context},
                       {"client_ms", s.client_ms},
                       {"client_exit_ms", call.exit_ms},
                       {"runner_ms", runner_ms}});
    save();  // the iteration is recorded before anything else can go wrong
    return report;
  }

  void write_result(const Step& s, const CallResult& call, const char* report) {
    const ojson result = call_record_json(call, s.session_id, report);
    if (auto w = record_.write_file(s.stem + ".result.json",
                                    util::dump_json(result, 2, util::BadUtf8::replace));
        !w)
      progress("note: " + w.error().message);
  }

  // What follows a recorded call (decide_after_call): the position done, tried again, retried,
  // skipped, or the run aborted.
  std::optional<RunOutcome> after_call(const Step& s, const CallResult& call,
                                       const ParsedReport& report) {
    // A client killed after its result because it did not exit has done its work.
    const bool ok = (call.exit_code == 0 || (call.cut_off && !call.timed_out)) &&
                    call.stream.has_result && !call.stream.is_error;
    const AfterCall next = decide_after_call(
        {ok, false, report.report, s.attempt, s.pos.max_attempts, s.pos.on_fail});  // limits: above
    const std::string why =
        report.report == TaskReport::Blocked ? "blocked: " + report.reason
        : !ok ? fmt::format("the call failed (exit {}{})", call.exit_code,
                            call.stream.subtype.empty() ? "" : ", " + call.stream.subtype)
              : fmt::format("not reported done after {} attempt(s)", s.attempt);
    auto& st = record_.state;
    TaskRecord& task = task_of(s);
    switch (next) {
      case AfterCall::Done:
        st.attempts.erase(s.pos.key);
        if (driver_) return workflow_step_done(s, call);
        end_task(task, TaskStatus::Done, call.stream.text, "");
        break;
      case AfterCall::Again:
      case AfterCall::LimitWait:
        break;
      case AfterCall::Retry:
        emit("task_retry", {{"task_id", task.id}, {"reason", why}});
        st.attempts.erase(s.pos.key);
        break;
      case AfterCall::Skip:
        st.attempts.erase(s.pos.key);
        if (driver_) {
          if (auto a = driver_->advance(fmt::format("[skipped by ctx-run: {}]", why), s.session_id,
                                        cfg_.context);
              !a)
            return finish(RunEnd::Failed, a.error().message);
        }
        end_task(task_of(s), TaskStatus::Skipped, call.stream.text, why);
        break;
      case AfterCall::Abort:
        end_task(task, TaskStatus::Failed, call.stream.text, why);
        save();
        return finish(RunEnd::Aborted, fmt::format("task {} failed: {}", task.id, why));
    }
    return std::nullopt;
  }

  // A workflow position reported done: the workflow moves past it. A loop task or a step ends
  // when the workflow moves past it; finished tasks are closed when the next position shows
  // another task key.
  std::optional<RunOutcome> workflow_step_done(const Step& s, const CallResult& call) {
    if (auto a = driver_->advance(strip_task_report(call.stream.text), s.session_id, cfg_.context);
        !a)
      return finish(RunEnd::Failed, a.error().message);
    auto following = driver_->position(record_.state.session_id(), w_.env, cfg_);
    if (!following) return finish(RunEnd::Failed, following.error().message);
    if (following->finished || following->task_key != s.pos.task_key)
      end_task(task_of(s), TaskStatus::Done, call.stream.text, "");
    pending_position_ = std::move(*following);
    return std::nullopt;
  }

  // The plan of a call made again after a limit: a resumed session is resumed again; a session the
  // refused call started goes on when the client has its transcript (it may write it before its
  // first request), else the same fresh start is made again.
  SessionPlan repeat_plan(const std::string& session, bool refused_fresh) {
    SessionPlan p;
    p.fresh = session.empty() ||
              (refused_fresh && !claude::locate_session(session, w_.env, w_.locations));
    p.reason = p.fresh ? "repeat" : "";
    return p;
  }

  // After a call that ended on a limit: a limit_wait event and a line on stderr, then the wait
  // (until the reset the client named, else the backoff), watching STOP, PAUSE and SIGINT as
  // between calls; or the run stops (on_limit stop, a reset past the ceiling). Returns the
  // outcome when the run ends here.
  std::optional<RunOutcome> wait_for_limit(const TaskRecord& task, const std::string& session_id,
                                           const std::string& stem, const CallResult& call,
                                           const claude::LimitAnswer& limit,
                                           const std::string& what = "call") {
    ++limits_in_a_row_;
    const int64_t now_s = util::now_ms() / 1000;
    const LimitWait w = decide_limit_wait(opts_.limits, limit.reset_epoch, now_s, limits_in_a_row_);
    const std::string kind(to_string(limit.kind));
    const std::string reset_at =
        limit.reset_epoch ? util::format_iso8601_ms(*limit.reset_epoch * 1000) : "";
    ojson data = {{"task_id", task.id},
                  {"session_id", session_id},
                  {"refused", what},
                  {"kind", kind},
                  {"message", limit.message},
                  {"in_a_row", limits_in_a_row_},
                  {"exit_code", call.exit_code},
                  {"wait_seconds", w.seconds},
                  {"why", w.why},
                  {"stop", w.stop}};
    if (!reset_at.empty()) data["reset_at"] = reset_at;
    ojson result = {{"exit_code", call.exit_code},
                    {"session_id", session_id},
                    {"limit", kind},
                    {"message", limit.message},
                    {"usage", usage_json(call.stream.usage)},
                    {"text", call.stream.text}};
    if (!reset_at.empty()) result["reset_at"] = reset_at;
    if (!call.stderr_tail.empty()) result["stderr_tail"] = call.stderr_tail;
    if (auto r = record_.write_file(fmt::format("{}.limit-{}.result.json", stem, limits_in_a_row_),
                                    util::dump_json(result, 2, util::BadUtf8::replace));
        !r)
      progress("note: " + r.error().message);
    emit("limit_wait", data);
    if (w.stop) {
      StopRecord on;
      on.scope = "limit";
      on.kind = kind;
      on.message = limit.message;
      on.why = w.why;
      if (!reset_at.empty()) on.reset_at = reset_at;
      record_.state.stopped_on = std::move(on);
      return finish(RunEnd::Stopped,
                    fmt::format("{} ({}){}: {}", kind, w.why,
                                reset_at.empty() ? "" : ", resets " + reset_at, limit.message));
    }
    progress(fmt::format(
        "waiting {} s for the {}{} before the {} again: {}", w.seconds, kind,
        reset_at.empty() ? " (no reset time given: backoff)" : " to reset at " + reset_at, what,
        limit.message));
    save();
    const int64_t t0 = util::now_ms(), until = t0 + w.seconds * 1000;
    while (util::now_ms() < until) {
      if (auto c = control()) return c;  // STOP, PAUSE (held), SIGINT
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::clamp<int64_t>(until - util::now_ms(), 1, opts_.limit_tick_ms)));
    }
    emit("limit_waited",
         {{"task_id", task.id}, {"kind", kind}, {"waited_ms", util::now_ms() - t0}});
    return std::nullopt;
  }

  // Between calls: a budget of the run or of the task about to run that is reached stops the run,
  // as STOP does; run.json says which and by how much (a --resume with a raised budget goes on).
  std::optional<RunOutcome> check_budgets(const TaskRecord& task, const Budget& task_budget) {
    auto& st = record_.state;
    std::string scope = "run";
    auto over = budget_reached(opts_.budget, {st.usage.total(), st.cost_usd});
    if (!over) {
      scope = "task";
      over = budget_reached(task_budget, {task.usage.total(), task.cost_usd.value_or(0)});
    }
    if (!over) return std::nullopt;
    const std::string who = scope == "run" ? "the run's" : fmt::format("task {}'s", task.id);
    StopRecord stop;
    stop.scope = scope;
    stop.budget = over->budget;
    stop.limit = over->limit;
    stop.spent = over->spent;
    stop.over = over->over;
    if (scope == "task") stop.task_id = task.id;
    st.stopped_on = stop;
    emit("budget_reached", stop_json(stop));
    return finish(RunEnd::Stopped, fmt::format("{} {} budget reached: {} spent of {}, over by {}",
                                               who, over->budget == "cost" ? "cost" : "token",
                                               budget_text(over->budget, over->spent),
                                               budget_text(over->budget, over->limit),
                                               budget_text(over->budget, over->over)));
  }

  // The context figure of the session's last call (its context against the effective window, as
  // the meter counts it); none before the session's first call.
  std::optional<context::ContextFigure> last_figure() const {
    const auto& s = record_.state.session;
    if (!s || !s->context_tokens || *s->context_tokens == 0) return std::nullopt;
    context::WindowHints hints;
    if (s->context_window)
      hints.status_line_window =
          static_cast<int64_t>(std::min<uint64_t>(*s->context_window, 1ull << 40));
    hints.model = session_model_.empty() ? model_ : session_model_;
    hints.client_version = client_version_;
    hints.compaction = compaction_;
    return make_figure(cfg_.context, hints,
                       static_cast<int64_t>(std::min<uint64_t>(*s->context_tokens, 1ull << 40)));
  }

  // Whether the last call's context reached the user's `[compact] at` (recorded as an event).
  bool compact_at_reached(const TaskRecord& task) {
    if (cfg_.compact.at <= 0) return false;
    const auto f = last_figure();
    if (!f || f->percent < cfg_.compact.at) return false;
    emit("compact_at", {{"task_id", task.id},
                        {"action", cfg_.compact.action},
                        {"percent", f->percent},
                        {"threshold", cfg_.compact.at},
                        {"context_tokens", f->tokens},
                        {"window", f->window},
                        {"denominator", f->denominator}});
    return true;
  }

  // Auto's decision before a call, from the figure of the session's last call. A fresh or compact
  // decision is an event with that figure.
  AutoAction auto_decision(const TaskRecord& task, bool new_task) {
    const auto figure = last_figure();
    if (!figure) return AutoAction::Keep;
    const context::ContextFigure& f = *figure;
    const AutoAction a = decide_auto(f.percent, new_task, opts_.auto_thresholds);
    if (a != AutoAction::Keep)
      emit("auto_decision",
           {{"task_id", task.id},
            {"decision", std::string(to_string(a))},
            {"why", a == AutoAction::Fresh ? "fresh_at" : "compact_at"},
            {"percent", f.percent},
            {"threshold", a == AutoAction::Fresh ? opts_.auto_thresholds.fresh_at
                                                 : opts_.auto_thresholds.compact_at},
            {"context_tokens", f.tokens},
            {"window", f.window},
            {"denominator", f.denominator}});
    return a;
  }

  void set_session(const std::string& id, const std::string& task_key, const std::string& anchor) {
    auto& st = record_.state;
    const int epoch = st.session ? st.session->anchor_epoch + 1 : 1;
    const std::string name = fmt::format("anchors/{:04}.md", epoch);
    if (!anchor.empty())
      if (auto r = record_.write_file(name, anchor); !r) progress("note: " + r.error().message);
    SessionRecord s;
    s.id = id;
    s.task_key = task_key;
    s.anchor_epoch = epoch;
    s.anchor_file = anchor.empty() ? "" : name;
    st.session = std::move(s);
    session_anchor_ = anchor;
    session_anchor_loaded_ = true;
  }

  // The current session's anchor, byte for byte as its first call had it.
  std::string read_session_anchor() {
    if (session_anchor_loaded_) return session_anchor_;
    session_anchor_loaded_ = true;
    const auto& s = record_.state.session;
    if (!s || s->anchor_file.empty()) return session_anchor_ = "";
    auto text = record_.read_file(s->anchor_file);
    session_anchor_ = text ? without_nul(std::move(*text)) : "";
    return session_anchor_;
  }

  RunOptions opts_;
  RunEnvironment& w_;
  RunRecord record_;
  std::optional<store::StateStore> store_;
  std::optional<WorkflowDriver> driver_;
  std::vector<workflow::TaskSpec> specs_;
  workflow::TaskSpec current_spec_;
  std::string workflow_name_;
  std::string session_anchor_;
  bool session_anchor_loaded_ = false;
  size_t task_number_ = 0;
  std::optional<Position> pending_position_;
  core::Config cfg_;               // the configuration the loop reads (context window, gates)
  std::string last_task_key_;      // the task of the last recorded call
  int64_t last_iteration_ms_ = 0;  // when the last iteration was recorded
  GitPrefetch git_;                // git's answers, asked while the last client call was exiting
  int64_t paused_ms_ = 0;          // waited for a PAUSE file to go since the last iteration
  bool stop_noted_ = false;        // a STOP that is not a file was named
  ContextMode mode_ = ContextMode::Continuous;  // the current task's mode
  bool summaries_wanted_ = false;               // some task carries the previous task's summary
  std::string model_;                           // --model of the client's arguments, for the window
  std::string session_model_;   // the model the client's last call named in its init event
  std::string client_version_;  // the client release its last call named in its init event
  context::CompactionSettings compaction_;  // the client's settings that move its compaction
  int limits_in_a_row_ = 0;                 // calls ended on a limit since one got through
};
}  // namespace

std::string_view run_status(RunEnd end) {
  switch (end) {
    case RunEnd::Completed:
      return "completed";
    case RunEnd::Failed:
      return "failed";
    case RunEnd::Aborted:
      return "aborted";
    case RunEnd::Stopped:
    case RunEnd::Interrupted:
      return "stopped";
    case RunEnd::BadInput:
      break;
  }
  return "";
}

fs::path run_folder(const fs::path& project, const std::string& run) {
  if (run.find('/') != std::string::npos) return fs::absolute(run);
  return fs::absolute(project) / ".ctxkit" / "runs" / run;
}

RunOutcome run(const RunOptions& options, RunEnvironment& world) {
  Runner r(options, world);
  return options.resume_run.empty() ? r.start() : r.resume();
}

}  // namespace ctxkit::runner
