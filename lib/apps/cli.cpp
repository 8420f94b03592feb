#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "core/config.hpp"

namespace ctxkit::apps {
namespace {

std::optional<int> parse_cli(CLI::App& app, const std::vector<std::string>& args, AppContext& ctx,
                             const char* tool) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return exit_code(ExitCode::ok);
  } catch (const CLI::ParseError& e) {
    print_error(ctx.err, tool, std::string(e.what()) + " (see --help)");
    return exit_code(ExitCode::failure);
  }
  return std::nullopt;
}

}  // namespace

int ErrorExit::operator()(std::string_view what) const {
  print_error(ctx.err, tool, what);
  return exit_code(ExitCode::failure);
}

ProgramCli::ProgramCli(const char* tool, std::string description, const std::string& usage)
    : tool_(tool), app_(std::move(description)) {
  app_.name(usage.empty() ? std::string(tool) : usage);
}

void ProgramCli::add_version(const std::string& description) {
  app_.add_flag("--version", show_version_, description);
}

void ProgramCli::add_show_config() {
  app_.add_flag("--show-config", show_config_,
                "print the effective configuration and where each value came from");
}

std::optional<int> ProgramCli::parse(const std::vector<std::string>& args, AppContext& ctx) {
  if (auto rc = parse_cli(app_, args, ctx, tool_)) return rc;
  if (show_version_) {
    ctx.out << tool_ << ' ' << version() << '\n';
    return exit_code(ExitCode::ok);
  }
  if (show_config_) {
    ctx.out << core::show_config(core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")}),
                                 &ctx.env);
    return exit_code(ExitCode::ok);
  }
  return std::nullopt;
}

}  // namespace ctxkit::apps
