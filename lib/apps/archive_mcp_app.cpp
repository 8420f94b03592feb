#include "apps/archive_mcp_app.hpp"

#include <unistd.h>

#include "apps/archive_server.hpp"
#include "apps/cli.hpp"
#include "archive/recall.hpp"
#include "core/config.hpp"
#include "mcp/mcp_server.hpp"
#include "mcp/stdio_transport.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-archive-mcp";
}  // namespace

int run_archive_mcp(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "The archive's search as an MCP server (stdio): archive_search and archive_show. "
                 "Registered by "
                 "ctx-settings install as the MCP server ctxkit-archive.");
  auto app = cli.app();
  bool verbose = false;
  app.add_flag("--verbose", verbose, "log each message on stderr");
  cli.add_version("print the version and exit");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  // The user's own configuration (and the environment): a project's .work.toml can exclude more
  // projects, never fewer, so the server starts where it is started (the session's project).
  const core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  archive::ArchiveRecall recall(cfg.locations(ctx.env), cfg.archive);

  auto pins = std::make_shared<PinToolContext>(PinToolContext{
      cfg, cfg.locations(ctx.env), ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or(""),
      ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or("")});
  mcp::McpServer server = archive_server(recall, version(), std::move(pins));
  if (verbose)
    server.set_logger([&ctx](std::string_view line) {
      print_note(ctx.err, kTool, line);
      ctx.err.flush();
    });

  auto signals = mcp::StopSignals::install();
  mcp::StdioOptions stdio;
  // The tools only read the archive and write the index in transactions: a stop may cut them.
  stdio.stop_within_message = true;
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
  return 0;
}

}  // namespace ctxkit::apps
