#include "apps/workflow_mcp_app.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "apps/mcp_config_app.hpp"
#include "apps/workflow_sink.hpp"
#include "core/config.hpp"
#include "mcp/mcp_server.hpp"
#include "mcp/stdio_transport.hpp"
#include "workflow/supervised_action.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-workflow-mcp";

fs::path absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? fs::path(p) : a.lexically_normal();
}
}  // namespace

int run_workflow_mcp(const std::vector<std::string>& args, AppContext& ctx) {
  if (!args.empty() && (args[0] == "register" || args[0] == "unregister"))
    return run_mcp_config(args, ctx);

  ProgramCli cli(kTool,
                 "The workflow MCP server (stdio). Register it with: ctx-workflow-mcp register "
                 "--config ~/.claude.json");
  auto app = cli.app();
  std::string worktree, workflow_path, repo_root, workflow_name;
  bool verbose = false;
  app.add_option("--worktree", worktree,
                 "the worktree holding workflow-state.json (default: $CLAUDE_PROJECT_DIR, else the "
                 "current directory)");
  app.add_option("--workflow-path", workflow_path,
                 "the workflow template file (as Lanes's server takes it)");
  app.add_option("--workflow", workflow_name, "a workflow name from the search path, or a file");
  app.add_option("--repo-root", repo_root,
                 "the project root searched for .lanes/workflows and .ctxkit/workflows (default: "
                 "the worktree)");
  app.add_flag("--verbose", verbose, "log each message on stderr");
  cli.add_version("print the version and exit");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (!workflow_path.empty() && !workflow_name.empty()) {
    print_error(ctx.err, kTool, "give --workflow-path or --workflow, not both");
    return 1;
  }

  workflow::ServiceOptions options;
  if (worktree.empty())
    worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(fs::current_path().string());
  options.worktree = absolute_path(worktree);
  if (!repo_root.empty()) options.repo_root = absolute_path(repo_root);
  options.workflow = !workflow_path.empty() ? absolute_path(workflow_path).string() : workflow_name;
  options.env = ctx.env;
  {
    const core::Config cfg =
        core::load_config(ctx.env, {core::project_start_dir(ctx.env, options.worktree.string())});
    options.on_event = workflow_event_sink(cfg, ctx.env, options.worktree, ctx.err, kTool);
    options.supervised = workflow::under_supervisor(ctx.env);
  }
  workflow::WorkflowService service(std::move(options));

  mcp::ToolRegistry tools;
  for (const auto& t : workflow::WorkflowService::tools()) {
    std::string name = t.at("name").get<std::string>();
    tools.add({name, t.value("description", std::string()),
               t.value("inputSchema", nlohmann::json::object()),
               [&service, name](const nlohmann::json& arguments) {
                 auto outcome = service.call(name, arguments);
                 return mcp::ToolResult{std::move(outcome.text), outcome.is_error};
               }});
  }
  mcp::McpServer server(
      mcp::ServerInfo{"ctxkit-workflow", version(), workflow::WorkflowService::instructions()},
      std::move(tools));
  if (verbose)
    server.set_logger([&ctx](std::string_view line) {
      print_note(ctx.err, kTool, line);
      ctx.err.flush();
    });

  auto signals = mcp::StopSignals::install();
  mcp::StdioOptions stdio;
  if (signals)
    stdio.stop_fd = signals->fd();
  else
    print_note(ctx.err, kTool,
               "warning: " + signals.error().message + " (SIGINT/SIGTERM end the process at once)");
  auto stopped = mcp::serve_stdio(server, STDIN_FILENO, STDOUT_FILENO, stdio);
  if (!stopped) {
    print_error(ctx.err, kTool, stopped.error().message);
    return 1;
  }
  if (verbose) {
    const char* why = *stopped == mcp::StopReason::Signal         ? "a signal"
                      : *stopped == mcp::StopReason::OutputClosed ? "stdout closed"
                                                                  : "end of input";
    print_note(ctx.err, kTool, fmt::format("stopping on {}", why));
  }
  return 0;
}

}  // namespace ctxkit::apps
