#include "apps/run_app.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "apps/report_app.hpp"
#include "core/config.hpp"
#include "core/toml_edit.hpp"
#include "runner/report.hpp"
#include "runner/runner.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/process.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-run";
constexpr int kRunFailed = 2;  // a task failed and the run was aborted, or the run could not go on

// How the run ended, said and turned into the exit code: 0 when every task is done, 1 on bad
// input (nothing recorded), 2 when a task failed and the run was aborted (or the run failed), 3
// when it stopped on max_iterations, STOP or PAUSE, a budget or a limit (see the run folder), 130
// after SIGINT.
int report_outcome(const runner::RunOutcome& r, AppContext& ctx) {
  using runner::RunEnd;
  if (r.end == RunEnd::BadInput) return ErrorExit{kTool, ctx}(r.why);
  if (!r.run_id.empty())
    ctx.out << util::one_line(fmt::format("run {} {}{}: {}", r.run_id, r.status,
                                          r.why.empty() ? "" : " (" + r.why + ")",
                                          r.folder.string()))
            << '\n';
  switch (r.end) {
    case RunEnd::Completed:
      return exit_code(ExitCode::ok);
    case RunEnd::Stopped:
      return exit_code(ExitCode::stopped);
    case RunEnd::Interrupted:
      return exit_code(ExitCode::interrupted);
    case RunEnd::BadInput:
    case RunEnd::Failed:
    case RunEnd::Aborted:
      break;
  }
  return kRunFailed;
}

fs::path project_dir(const std::string& given) {
  if (!given.empty()) return fs::absolute(given);
  std::error_code ec;
  return fs::current_path(ec);
}

int run_report_command(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Per task and per run: iterations, context resets, compactions, tokens by kind, "
                 "the anchoring share, wall time.",
                 "ctx-run report");
  auto app = cli.app();
  std::vector<std::string> runs;
  std::string project, html;
  bool json_out = false, all = false;
  app.add_option("runs", runs,
                 "run ids (under <project>/.ctxkit/runs) or run folders; default: the latest run");
  app.add_option("--project", project, "the project (default: the current directory)");
  app.add_flag("--all", all, "every run of the project, oldest first");
  app.add_flag("--json", json_out, "print the reports as JSON");
  app.add_option("--html", html,
                 "write the reports as one HTML page to FILE (\"-\": standard output) and print "
                 "its path");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  const fs::path proj = project_dir(project);
  std::vector<fs::path> folders;
  for (const auto& r : runs) folders.push_back(runner::run_folder(proj, r));
  if (folders.empty()) {
    auto listed = runner::list_runs(proj);
    if (listed.empty())
      return error(fmt::format("no runs in {}", (proj / ".ctxkit" / "runs").string()));
    if (all)
      folders = listed;
    else
      folders.push_back(listed.back());
  }
  std::vector<ojson> reports;
  for (const auto& f : folders) {
    auto r = runner::run_report(f);
    if (!r && !html.empty()) {
      // The page says what could not be read (a folder of an older ctxkit) beside the others.
      reports.push_back({{"run_id", f.filename().string()}, {"error", r.error().message}});
      continue;
    }
    if (!r) return error(r.error().message);
    reports.push_back(std::move(*r));
  }
  if (!html.empty()) return write_run_page(reports, html, ctx);
  if (json_out) {
    ojson out = reports.size() == 1 ? reports[0] : ojson(reports);
    ctx.out << util::dump_json(out, 2, util::BadUtf8::replace) << '\n';
  } else {
    runner::print_reports(reports, ctx.out);
  }
  return 0;
}

int run_config_command(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(
      kTool,
      "Sets one [runner] key of the project's .work.toml, keeping the rest of the file as it is.",
      "ctx-run config");
  auto app = cli.app();
  std::string verb, key, value, project;
  app.add_option("verb", verb, "set").required().one_of({"set"});
  app.add_option("key", key, "runner.mode | runner.on_fail | runner.progress_file | ...")
      .required();
  app.add_option("value", value, "the value").required();
  app.add_option("--project", project,
                 "the project whose .work.toml is edited (default: the current directory)");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  const std::string prefix = "runner.";
  if (!key.starts_with(prefix))
    return error(fmt::format("only runner.* keys are set here, not '{}'", key));
  const std::string name = key.substr(prefix.size());
  if (name == "mode" && !runner::parse_context_mode(value))
    return error(fmt::format(
        "unknown mode '{}' (continuous, fresh-per-task, fresh-per-iteration, hybrid, auto)",
        value));
  if (name == "on_fail" && !runner::parse_on_fail(value))
    return error(fmt::format("unknown on_fail '{}' (retry, skip, abort)", value));
  if (name != "mode" && name != "on_fail" && name != "progress_file")
    return error(
        fmt::format("'{}' is not set by this command (mode, on_fail, progress_file; "
                    "edit .work.toml for others)",
                    key));
  const fs::path file = project_dir(project) / ".work.toml";
  std::string text;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    auto t = util::read_file(file, {16u << 20, false});
    if (!t) return error(t.error().message);
    text = std::move(*t);
  }
  auto edited = core::set_toml_string(text, "runner", name, value);
  if (!edited) return error(fmt::format("{}: {}", file.string(), edited.error().message));
  // Check the result as ctxkit reads it: the key must take, and nothing may become a warning.
  core::Config check;
  core::apply_toml_text(check, *edited, file.string(), core::ConfigLayer::Project);
  if (!check.errors.empty())
    return error(fmt::format("{}: {}", file.string(), check.errors.front()));
  if (name == "progress_file" && check.runner.progress_file != value) {
    const auto w = std::find_if(
        check.warnings.begin(), check.warnings.end(),
        [](const std::string& s) { return s.find("progress_file") != std::string::npos; });
    return error(
        w != check.warnings.end()
            ? *w
            : fmt::format("{}: runner.progress_file would not take '{}'", file.string(), value));
  }
  struct stat st {};
  const unsigned mode = ::stat(file.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  if (auto w = util::write_file_atomic(file, *edited, mode); !w) return error(w.error().message);
  ctx.out << fmt::format("{}: [runner] {} = \"{}\"\n", file.string(), name, value);
  return 0;
}
}  // namespace

int run_runner(const std::vector<std::string>& args, AppContext& ctx) {
  if (!args.empty() && args[0] == "report")
    return run_report_command({args.begin() + 1, args.end()}, ctx);
  if (!args.empty() && args[0] == "config")
    return run_config_command({args.begin() + 1, args.end()}, ctx);

  ProgramCli cli(kTool,
                 "Runs claude -p over a list of tasks or a workflow, with a context mode: "
                 "continuous, fresh-per-task, "
                 "fresh-per-iteration, hybrid or auto. Subcommands: report [RUN…], config set "
                 "runner.KEY VALUE.");
  auto app = cli.app();
  std::string tasks_file, workflow, mode, project, model, on_fail, on_limit, anchor_sources, resume,
      summary;
  std::vector<std::string> claude_args;
  bool fresh_context = false, no_reanchor = false, reanchor = false, dry_run = false;
  int max_iterations = 0, max_task_iterations = 0;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost;
  app.add_option(
      "tasks", tasks_file,
      "a tasks file: YAML or JSON list of {id, title, description, acceptance, depends_on, "
      "context_mode, max_iterations, max_tokens, max_cost_usd}, or a Markdown checklist");
  app.add_option(
      "--workflow", workflow,
      "run a workflow template (a name from the search path, or a file); a tasks file then "
      "fills its loop steps");
  app.add_option("--context-mode", mode,
                 "continuous | fresh-per-task | fresh-per-iteration | hybrid | auto");
  app.add_flag("--fresh-context", fresh_context, "the same as --context-mode fresh-per-task");
  app.add_option("--project", project,
                 "where claude runs and the run is recorded (default: the current directory)");
  app.add_option("--model", model, "passed to claude as --model");
  app.add_option("--claude-arg", claude_args, "one more argument for claude (repeatable)")
      .one_value_each();
  app.add_option("--max-iterations", max_iterations, "calls in the whole run (default 50)")
      .range(1, 1000000);
  app.add_option("--max-task-iterations", max_task_iterations,
                 "calls of one task before on_fail (default 3)")
      .range(1, 10000);
  app.add_option("--on-fail", on_fail, "retry | skip | abort (default abort)");
  app.add_option(
      "--on-limit", on_limit,
      "wait | stop: after a call that ended on a rate or usage limit, wait for its reset and "
      "repeat it (default), or stop the run");
  app.add_option(
      "--max-tokens", max_tokens,
      "stop the run between calls once its tokens (all four kinds) reach N (0: no limit)");
  app.add_option("--max-cost", max_cost,
                 "stop the run between calls once its cost reaches USD (0: no limit)");
  app.add_flag("--reanchor", reanchor, "give every fresh session the re-anchor (default)");
  app.add_flag("--no-reanchor", no_reanchor, "no re-anchor");
  app.add_option("--anchor-sources", anchor_sources,
                 "what the anchor holds: prompt,agent,task,git,progress,summary,workflow");
  app.add_option("--summary", summary, "the workflow's request summary (workflow_start)");
  app.add_option("--resume", resume, "continue a stopped run (its id or folder)");
  app.add_flag("--dry-run", dry_run,
               "print the plan (each call's argv and anchor) and run nothing");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  if (reanchor && no_reanchor) return error("--reanchor and --no-reanchor exclude each other");
  if (max_tokens && *max_tokens < 0)
    return error(fmt::format("--max-tokens must be 0 or more, not {}", *max_tokens));
  if (max_cost && !(*max_cost >= 0 && *max_cost <= 1e9))
    return error(fmt::format("--max-cost must be a number from 0 to 1e9, not {}", *max_cost));

  runner::RunOptions o;
  o.project = project_dir(project);
  const core::Config cfg = core::load_config(ctx.env, {o.project});
  // A budget or a threshold that does not take, from a file or a variable, would leave an
  // unattended run without its limit: refused. So is a configuration file that could not be read
  // at all (it may hold a budget).
  for (const char* key :
       {"runner.max_tokens", "runner.max_cost_usd", "runner.fresh_at", "runner.compact_at"})
    if (auto it = cfg.refused.find(key); it != cfg.refused.end())
      return error("config: " + it->second);
  if (!cfg.unread_files.empty()) return error("config: " + cfg.unread_files.front());
  if (cfg.runner.fresh_at >= cfg.runner.compact_at)
    return error(fmt::format("[runner] fresh_at ({}) must be below compact_at ({})",
                             cfg.runner.fresh_at, cfg.runner.compact_at));
  for (const auto& e : cfg.errors) print_note(ctx.err, kTool, "config: " + e);
  for (const auto& w : cfg.warnings) print_note(ctx.err, kTool, "config: " + w);
  std::string mode_text = cfg.runner.mode;
  o.mode_origin = cfg.origin("runner.mode");
  if (fresh_context) {
    mode_text = "fresh-per-task";
    o.mode_origin = "--fresh-context";
  }
  if (!mode.empty()) {
    if (fresh_context && mode != "fresh-per-task")
      return error("--fresh-context and --context-mode " + mode + " disagree");
    mode_text = mode;
    o.mode_origin = "--context-mode";
  }
  auto parsed_mode = runner::parse_context_mode(mode_text);
  if (!parsed_mode)
    return error(
        fmt::format("unknown context mode '{}' (continuous, fresh-per-task, "
                    "fresh-per-iteration, hybrid, auto)",
                    mode_text));
  o.mode = *parsed_mode;
  auto parsed_fail = runner::parse_on_fail(on_fail.empty() ? cfg.runner.on_fail : on_fail);
  if (!parsed_fail) return error(fmt::format("unknown on_fail '{}' (retry, skip, abort)", on_fail));
  o.on_fail = *parsed_fail;
  if (!anchor_sources.empty()) {
    auto s = runner::parse_anchor_sources(anchor_sources);
    if (!s) return error(s.error().message);
    o.sources = *s;
  }
  o.tasks_file = tasks_file;
  o.workflow = workflow;
  o.summary = summary;
  o.claude_bin = cfg.rollover.claude_bin;
  o.claude_args = cfg.runner.claude_args;
  if (!model.empty()) {
    o.claude_args.push_back("--model");
    o.claude_args.push_back(model);
  }
  o.claude_args.insert(o.claude_args.end(), claude_args.begin(), claude_args.end());
  o.max_iterations = max_iterations ? max_iterations : cfg.runner.max_iterations;
  o.max_task_iterations =
      max_task_iterations ? max_task_iterations : cfg.runner.max_task_iterations;
  o.reanchor = !no_reanchor;
  o.anchor_files = cfg.runner.anchor_files;
  o.progress_file = cfg.runner.progress_file;
  // A file the user named may be anywhere; the defaults and the project's own names only inside
  // the project (links followed), so that a cloned repository cannot pull a file into the prompt.
  o.anchor_files_anywhere = cfg.set_by_user("runner.anchor_files");
  o.progress_file_anywhere = cfg.set_by_user("runner.progress_file");
  o.progress_lines = cfg.runner.progress_lines;
  o.summary_max_lines = cfg.runner.summary_max_lines;
  o.anchor_max_tokens = cfg.runner.anchor_max_tokens;
  o.exit_grace_seconds = cfg.runner.exit_grace_seconds;
  o.call_timeout_seconds = cfg.runner.call_timeout_seconds;
  // 0 is no limit. On --resume a budget of the command line (or the configuration) replaces the
  // recorded one.
  const int64_t tokens_budget = max_tokens ? *max_tokens : cfg.runner.max_tokens;
  const double cost_budget = max_cost ? *max_cost : cfg.runner.max_cost_usd;
  if (tokens_budget > 0) o.budget.max_tokens = static_cast<uint64_t>(tokens_budget);
  if (cost_budget > 0) o.budget.max_cost_usd = cost_budget;
  auto configured = [&](const char* key) {
    return cfg.origins.count(key) && cfg.origins.at(key) != "default";
  };
  o.budget_given = max_tokens || max_cost || configured("runner.max_tokens") ||
                   configured("runner.max_cost_usd");
  o.auto_thresholds = {cfg.runner.fresh_at, cfg.runner.compact_at};
  auto parsed_limit = runner::parse_on_limit(on_limit.empty() ? cfg.runner.on_limit : on_limit);
  if (!parsed_limit) return error(fmt::format("unknown --on-limit '{}' (wait, stop)", on_limit));
  o.limits = {*parsed_limit, cfg.runner.limit_backoff_seconds, cfg.runner.limit_max_wait_seconds};
  o.dry_run = dry_run;
  o.resume_run = resume;
  o.busy_timeout_ms = cfg.state.busy_timeout_ms;
  if (!resume.empty() && (!tasks_file.empty() || !workflow.empty()))
    return error(
        "--resume continues a run as it was started: "
        "give no tasks file or workflow with it");

  // SIGINT ends the run after the current call is recorded (the client, in the terminal's
  // process group, gets a typed Ctrl-C itself).
  util::SignalLatch sigint(SIGINT);
  bool interrupted = false;
  runner::RunEnvironment world{
      ctx.env, cfg.locations(ctx.env), ctx.out, ctx.err, !::isatty(2), [&] {
        if (sigint.take()) interrupted = true;
        return interrupted;
      }};
  return report_outcome(runner::run(o, world), ctx);
}

}  // namespace ctxkit::apps
