#include "runner/run_setup.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/json_io.hpp"
#include "util/process.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"
#include "workflow/workflow_catalog.hpp"
#include "workflow/workflow_service.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

bool wants_summaries(ContextMode run_mode, const std::vector<workflow::TaskSpec>& specs) {
  if (carries_summary(run_mode)) return true;
  return std::any_of(specs.begin(), specs.end(), [](const workflow::TaskSpec& s) {
    auto m = parse_context_mode(s.context_mode);
    return m && carries_summary(*m);
  });
}

// The first task of `specs` whose context_mode is not one, if any.
const workflow::TaskSpec* unknown_mode(const std::vector<workflow::TaskSpec>& specs) {
  for (const auto& s : specs)
    if (!s.context_mode.empty() && !parse_context_mode(s.context_mode)) return &s;
  return nullptr;
}

// The tasks file's tasks, in order (none without a tasks file).
Result<std::vector<workflow::TaskSpec>> load_tasks_file(const fs::path& file) {
  if (file.empty()) return std::vector<workflow::TaskSpec>{};
  auto tasks = workflow::load_task_list(file);
  if (!tasks) return std::unexpected(tasks.error());
  auto ordered = workflow::order_tasks(std::move(*tasks));
  if (!ordered) return fail(fmt::format("{}: {}", file.string(), ordered.error().message));
  if (const auto* bad = unknown_mode(*ordered))
    return fail(
        fmt::format("{}: task '{}': unknown context_mode '{}' (continuous, fresh-per-task, "
                    "fresh-per-iteration, hybrid, auto)",
                    file.string(), bad->id, bad->context_mode));
  return ordered;
}

// A workflow state in the project must load, and may be running only the workflow `name`.
Result<void> check_workflow_state(const fs::path& project, const std::string& name) {
  auto existing = workflow::read_state_text(project);
  if (!existing) return std::unexpected(existing.error());
  if (!*existing) return {};
  auto m = workflow::WorkflowMachine::from_state_text(**existing, nullptr);
  if (!m)
    return fail(fmt::format("{}: {}", workflow::state_path(project).string(), m.error().message));
  if (m->state_status() == "running" && m->workflow().name != name)
    return fail(fmt::format("{} holds a running workflow '{}', not '{}'",
                            workflow::state_path(project).string(), m->workflow().name, name));
  return {};
}

// The workflow's template, found and loaded (opts.workflow becomes its path), and checked
// against a state the project already holds.
Result<RunSource> workflow_source(RunOptions& opts, const util::Env& env,
                                  std::string& workflow_name) {
  auto dirs = workflow::default_search_dirs(env, opts.project);
  auto path = workflow::resolve_workflow(opts.workflow, dirs);
  if (!path) return std::unexpected(path.error());
  auto tmpl = workflow::load_workflow_file(*path);
  if (!tmpl) return std::unexpected(tmpl.error());
  if (auto r = check_workflow_state(opts.project, tmpl->name); !r)
    return std::unexpected(r.error());
  opts.workflow = path->string();
  workflow_name = tmpl->name;
  RunSource source;
  source.kind = "workflow";
  source.workflow = opts.workflow;
  source.name = tmpl->name;
  if (!opts.tasks_file.empty()) source.tasks_file = fs::absolute(opts.tasks_file).string();
  return source;
}

RunSource tasks_source(const RunOptions& opts) {
  RunSource source;
  source.kind = "tasks";
  source.tasks_file = fs::absolute(opts.tasks_file).string();
  return source;
}

// The options a new run records (a --resume goes on with them).
RunOptionsRecord options_record(const RunOptions& opts) {
  RunOptionsRecord o;
  o.max_iterations = opts.max_iterations;
  o.max_task_iterations = opts.max_task_iterations;
  o.on_fail = std::string(to_string(opts.on_fail));
  o.reanchor = opts.reanchor;
  o.max_tokens = opts.budget.max_tokens;
  o.max_cost_usd = opts.budget.max_cost_usd;
  o.fresh_at = opts.auto_thresholds.fresh_at;
  o.compact_at = opts.auto_thresholds.compact_at;
  o.claude_bin = opts.claude_bin;
  o.claude_args = opts.claude_args;
  return o;
}

// A new run's state: its id, what it runs (tasks and their records), the options it runs with.
RunState new_run_state(const RunOptions& opts, const std::vector<workflow::TaskSpec>& specs,
                       RunSource source) {
  RunState st;
  for (const auto& s : specs) {
    st.task_specs.push_back({s, ojson::object()});
    if (opts.workflow.empty())
      st.tasks.push_back(
          TaskRecord::make(s.id, s.title, s.done ? TaskStatus::Done : TaskStatus::Pending));
  }
  const int64_t now = util::now_ms();
  st.run_id = new_run_id(now);
  st.project = fs::absolute(opts.project).string();
  st.mode = to_string(opts.mode);
  st.mode_origin = opts.mode_origin;
  st.source = std::move(source);
  st.status = "running";
  st.started_at_ms = now;
  st.options = options_record(opts);
  return st;
}

Result<void> client_on_path(const RunOptions& opts, const util::Env& env) {
  auto found = util::find_in_path(opts.claude_bin, env.get("PATH").value_or("/usr/bin:/bin"));
  if (!found) return std::unexpected(found.error());
  return {};
}

// What runs is never taken from the folder: run.json lives in the project, which a cloned
// repository can ship. The client and its arguments come from the user's configuration and
// this command line, as for a new run; a recorded value that differs is named, then replaced.
void note_recorded_client(const RunOptionsRecord& o, const RunOptions& opts, const fs::path& file,
                          const SetupNote& note) {
  if ((!o.claude_bin || *o.claude_bin == opts.claude_bin) &&
      (!o.claude_args || *o.claude_args == opts.claude_args))
    return;
  auto shown = [](const ojson& v) { return util::dump_json(v, -1, util::BadUtf8::replace); };
  note(fmt::format(
      "note: {} records claude_bin {} and claude_args {}; they are ignored: this run uses {} "
      "and {} "
      "(your configuration and command line)",
      file.string(), shown(o.claude_bin ? ojson(*o.claude_bin) : ojson()),
      shown(o.claude_args ? ojson(*o.claude_args) : ojson()),
      util::dump_json(ojson(opts.claude_bin)), util::dump_json(ojson(opts.claude_args))));
}

// The options the run was started with (run.json's "options") hold again, but for a budget given
// now and the client to run; run.json records the ones the run goes on with.
void restore_options(RunRecord& record, RunOptions& opts, const SetupNote& note) {
  auto& o = record.state.options;
  opts.max_iterations = o.max_iterations.value_or(opts.max_iterations);
  opts.max_task_iterations = o.max_task_iterations.value_or(opts.max_task_iterations);
  if (auto f = parse_on_fail(o.on_fail.value_or(""))) opts.on_fail = *f;
  opts.reanchor = o.reanchor.value_or(opts.reanchor);
  if (!opts.budget_given) {
    opts.budget = {};
    opts.budget.max_tokens = o.max_tokens;
    if (o.max_cost_usd && *o.max_cost_usd >= 0) opts.budget.max_cost_usd = o.max_cost_usd;
  }
  o.max_tokens = opts.budget.max_tokens;
  o.max_cost_usd = opts.budget.max_cost_usd;
  if (o.fresh_at) opts.auto_thresholds.fresh_at = *o.fresh_at;
  if (o.compact_at) opts.auto_thresholds.compact_at = *o.compact_at;
  note_recorded_client(o, opts, record.file(), note);
  o.claude_bin = opts.claude_bin;
  o.claude_args = opts.claude_args;
}

// A task's budget is raised in the tasks file: a --resume reads the budgets of its tasks again
// from it (when it is still there and still reads; else the recorded ones hold).
void reread_task_budgets(RunSetup& setup, const SetupNote& note) {
  const std::string file = setup.record.state.source.tasks_file.value_or("");
  if (file.empty()) return;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return;
  auto tasks = workflow::load_task_list(file);
  if (!tasks) {
    note(fmt::format("note: {}: the recorded task budgets hold", tasks.error().message));
    return;
  }
  auto& specs = setup.specs;
  auto& recorded = setup.record.state.task_specs;
  for (size_t i = 0; i < specs.size(); ++i)
    for (const auto& t : *tasks) {
      if (t.id != specs[i].id) continue;
      specs[i].max_tokens = t.max_tokens;
      specs[i].max_cost_usd = t.max_cost_usd;
      if (i < recorded.size()) recorded[i].spec = specs[i];
    }
}

// The session ids run.json names are passed on the client's command line: only an id of the
// client's shape is (an id starting with '-' would be taken for an option).
Result<void> check_session_ids(const ojson& raw, const fs::path& file) {
  for (const char* key : {"session", "run_session"})
    if (const ojson session = raw.value(key, ojson()); session.is_object()) {
      const ojson id = session.value("id", ojson());
      if (!id.is_string() ||
          (!id.get<std::string>().empty() && !util::is_uuid(id.get<std::string>())))
        return fail(fmt::format("{}: the session id {} is not a session id", file.string(),
                                util::dump_json(id)));
    }
  return {};
}

}  // namespace

std::string new_run_id(int64_t now_ms) {
  std::string stamp = util::format_compact_utc(now_ms);
  if (!stamp.empty() && stamp.back() == 'Z') stamp.pop_back();
  return fmt::format("{}.{:03}Z-{}", stamp, now_ms % 1000, util::random_uuid().substr(0, 6));
}

Result<RunSetup> set_up_new_run(RunOptions& opts, const util::Env& env) {
  if (opts.tasks_file.empty() && opts.workflow.empty())
    return fail("nothing to run: give a tasks file or --workflow NAME");
  std::error_code ec;
  if (!fs::is_directory(opts.project, ec))
    return fail(fmt::format("{} is not a directory", opts.project.string()));
  RunSetup setup;
  auto specs = load_tasks_file(opts.tasks_file);
  if (!specs) return std::unexpected(specs.error());
  setup.specs = std::move(*specs);
  setup.summaries_wanted = wants_summaries(opts.mode, setup.specs);
  auto source = opts.workflow.empty() ? Result<RunSource>(tasks_source(opts))
                                      : workflow_source(opts, env, setup.workflow_name);
  if (!source) return std::unexpected(source.error());
  if (!opts.dry_run)
    if (auto r = client_on_path(opts, env); !r) return std::unexpected(r.error());
  RunState st = new_run_state(opts, setup.specs, std::move(*source));
  const fs::path folder = fs::absolute(opts.project) / ".ctxkit" / "runs" / st.run_id;
  setup.record = RunRecord(folder, std::move(st));
  return setup;
}

Result<RunSetup> set_up_resumed_run(RunOptions& opts, const util::Env& env, const SetupNote& note) {
  const fs::path folder = run_folder(opts.project, opts.resume_run);
  auto raw = RunRecord::read_json(folder);
  if (!raw) return std::unexpected(raw.error());
  RunSetup setup;
  setup.record = RunRecord(folder, run_state_from_json(*raw));
  if (auto r = setup.record.lock(); !r) return std::unexpected(r.error());
  // Read again under the lock: the ctx-run that held it may have saved since.
  if (auto again = RunRecord::read_json(folder); again) {
    raw = std::move(again);
    setup.record.state = run_state_from_json(*raw);
  }
  auto& st = setup.record.state;
  const fs::path file = setup.record.file();
  if (st.status == "completed") return fail(fmt::format("run {} is already complete", st.run_id));
  // The run goes on as it was started, whatever the command line says now.
  auto mode = parse_context_mode(st.mode);
  if (!mode) return fail(fmt::format("{}: unknown mode in run.json", file.string()));
  opts.mode = *mode;
  restore_options(setup.record, opts, note);
  if (auto r = check_session_ids(*raw, file); !r) return std::unexpected(r.error());
  if (st.source.kind == "workflow") opts.workflow = st.source.workflow.value_or("");
  for (const auto& t : st.task_specs) setup.specs.push_back(t.spec);
  if (const auto* bad = unknown_mode(setup.specs))
    return fail(fmt::format("{}: task '{}' has an unknown context_mode '{}'", file.string(),
                            bad->id, bad->context_mode));
  reread_task_budgets(setup, note);
  setup.summaries_wanted = wants_summaries(opts.mode, setup.specs);
  if (auto r = client_on_path(opts, env); !r) return std::unexpected(r.error());
  return setup;
}

}  // namespace ctxkit::runner
