#include "apps/mcp_config_app.hpp"

#include <filesystem>

#include "apps/cli.hpp"
#include "install/mcp_edit.hpp"
#include "util/paths.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-workflow-mcp";
}  // namespace

int run_mcp_config(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Registers the workflow MCP server in a Claude Code MCP configuration "
                 "(~/.claude.json or a project's .mcp.json), or removes it.",
                 std::string(kTool) + " register|unregister");
  auto app = cli.app();
  std::string action, config_path, manifest_path, name = "ctxkit-workflow", command;
  std::vector<std::string> server_args;
  bool replace = false, dry_run = false, all = false;
  app.add_option("action", action, "register | unregister")
      .required()
      .one_of({"register", "unregister"});
  app.add_option("--config", config_path,
                 "the file to edit: ~/.claude.json (user) or <project>/.mcp.json")
      .required();
  app.add_option("--name", name, "the server's name (tools are mcp__<name>__<tool>)");
  app.add_option("--command", command, "the program to run (default: this program)");
  app.add_option("--arg", server_args, "an argument for the server (repeatable)");
  app.add_option("--manifest", manifest_path,
                 "where to record (register) or read (unregister) what was created");
  app.add_flag("--replace", replace,
               "take the name over from a server of yours (one that runs another program; a "
               "server that runs this program from another folder is taken over without it)");
  app.add_flag("--all", all,
               "unregister: remove the server also when it runs this program from another folder "
               "(another install's)");
  app.add_flag("--dry-run", dry_run, "print the resulting file instead of writing it");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);

  if (command.empty()) {
    auto dir = util::executable_dir();
    if (!dir) return error("cannot find this program's path; give --command");
    command = (*dir / "ctx-workflow-mcp").string();
  }
  install::McpEdit edit{action == "unregister",
                        config_path,
                        manifest_path,
                        name,
                        command,
                        server_args,
                        replace,
                        all,
                        dry_run};
  if (auto r = install::edit_mcp_config(edit, ctx.env, ctx.out); !r)
    return error(r.error().message);
  return 0;
}

}  // namespace ctxkit::apps
