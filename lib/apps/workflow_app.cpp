#include "apps/workflow_app.hpp"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/workflow_sink.hpp"
#include "core/config.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/paths.hpp"
#include "workflow/supervised_action.hpp"
#include "workflow/workflow_catalog.hpp"
#include "workflow/workflow_events.hpp"
#include "workflow/workflow_service.hpp"
#include "workflow/workflow_text.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-workflow";

std::optional<std::string> read_text(const std::string& path, AppContext& ctx) {
  if (path == "-") {
    auto in = ctx.read_stdin();
    if (!in) return std::nullopt;
    return *in;
  }
  auto text = util::read_file(path, {16u << 20});  // never blocks on a FIFO
  if (!text) return std::nullopt;
  return *text;
}

}  // namespace

int run_workflow(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Drives a workflow (Lanes-compatible templates) from the command line; the same "
                 "state as the MCP server.");
  auto app = cli.app();
  app.require_subcommand(0, 1);
  app.fallthrough();  // `status --worktree P` as well as `--worktree P status`
  std::string worktree, summary, output, output_file, loop_id, tasks_file, spec;
  std::vector<std::string> files, dirs;
  bool json_out = false;
  app.add_option("--worktree", worktree,
                 "the worktree holding workflow-state.json (default: $CLAUDE_PROJECT_DIR, else .)");
  app.add_option("--dir", dirs, "an extra template directory (searched last, so it wins)");
  app.add_flag("--json", json_out, "print the JSON answer");
  cli.add_version();
  auto list = app.add_subcommand("list", "list the workflow templates on the search path");
  auto validate = app.add_subcommand("validate", "check template files");
  validate.add_option("files", files, "template files").required();
  auto start = app.add_subcommand("start", "start a workflow (or resume the one in progress)");
  start.add_option("workflow", spec, "a template name or file").required();
  start.add_option("--summary", summary, "a short summary of the request");
  auto status = app.add_subcommand("status", "show the current step and its instructions");
  auto set_tasks = app.add_subcommand("set-tasks", "give a loop step its tasks");
  set_tasks.add_option("loop", loop_id, "the loop step's id").required();
  set_tasks
      .add_option("file", tasks_file, "a JSON array of {id, title, description?} (or - for stdin)")
      .required();
  auto advance = app.add_subcommand("advance", "finish the current step and move on");
  auto out_opt = advance.add_option("--output", output, "what the step produced");
  advance.add_option("--output-file", output_file, "read the output from a file (- for stdin)")
      .excludes(out_opt);
  auto context = app.add_subcommand("context", "show the outputs of earlier steps");
  for (auto sub : {list, validate, start, status, set_tasks, advance, context})
    sub.add_flag("--json", json_out, "print the JSON answer");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);

  if (validate.parsed()) {
    int rc = 0;
    for (const auto& f : files) {
      auto t = workflow::load_workflow_file(f);
      if (!t) {
        print_error(ctx.err, kTool, t.error().message);
        rc = 1;
      } else if (!json_out) {
        ctx.out << fmt::format("{}: ok ({}, {} steps)\n", f, t->name, t->steps.size());
      }
    }
    if (json_out && rc == 0) ctx.out << "{\"valid\":true}\n";
    return rc;
  }

  workflow::ServiceOptions o;
  o.env = ctx.env;
  if (worktree.empty())
    worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(fs::current_path().string());
  o.worktree = fs::absolute(worktree);
  o.repo_root = o.worktree;
  o.search_dirs = workflow::default_search_dirs(ctx.env, o.repo_root);
  for (const auto& d : dirs) o.search_dirs.push_back(fs::absolute(d));
  const core::Config cfg =
      core::load_config(ctx.env, {core::project_start_dir(ctx.env, o.worktree.string())});
  const fs::path log = cfg.locations(ctx.env).state_db();
  const int busy = cfg.state.busy_timeout_ms;
  const fs::path wt = o.worktree;
  o.on_event = workflow_event_sink(cfg, ctx.env, wt, ctx.err, kTool);
  o.supervised = workflow::under_supervisor(ctx.env);
  if (start.parsed()) o.workflow = spec;
  workflow::WorkflowService service(std::move(o));

  std::string tool;
  json call_args = json::object();
  if (list.parsed()) {
    tool = "workflow_list";
  } else if (start.parsed()) {
    tool = "workflow_start";
    call_args["workflow"] = spec;
    if (!summary.empty()) call_args["summary"] = summary;
  } else if (set_tasks.parsed()) {
    tool = "workflow_set_tasks";
    auto text = read_text(tasks_file, ctx);
    if (!text) return error(fmt::format("{}: cannot read the tasks", tasks_file));
    constexpr size_t kMaxDepth = 64;  // a task list needs 3 levels
    if (util::json_depth(*text, kMaxDepth) > kMaxDepth)
      return error(fmt::format("{}: nested deeper than {} levels", tasks_file, kMaxDepth));
    auto tasks = util::parse_json(*text);
    if (tasks.is_discarded()) return error(fmt::format("{}: not valid JSON", tasks_file));
    if (tasks.is_object() && tasks.contains("tasks")) tasks = tasks["tasks"];
    call_args = {{"loop_id", loop_id}, {"tasks", tasks}};
  } else if (advance.parsed()) {
    tool = "workflow_advance";
    if (!output_file.empty()) {
      auto text = read_text(output_file, ctx);
      if (!text) return error(fmt::format("{}: cannot read the output", output_file));
      output = *text;
    }
    call_args["output"] = output;
  } else if (context.parsed()) {
    tool = "workflow_context";
  } else {
    tool = "workflow_status";
    (void)status;
  }

  const auto outcome = service.call(tool, call_args);
  if (outcome.is_error) {
    auto e = util::parse_json(outcome.text);
    return error(!e.is_discarded() && e.contains("error") ? e["error"].get<std::string>()
                                                          : outcome.text);
  }
  if (json_out) {
    ctx.out << outcome.text << '\n';
    return 0;
  }
  const ojson body = util::parse_ordered_json_or_throw(outcome.text);
  ctx.out << workflow::answer_text(tool, body, loop_id);
  if (tool == "workflow_status" && !body.contains("contextAction") && body.contains("step"))
    if (auto fate = workflow::action_fate(workflow::read_events(log, busy, wt),
                                          body["step"].get<std::string>());
        !fate.empty())
      ctx.out << '\n' << fate << '\n';
  return 0;
}

}  // namespace ctxkit::apps
