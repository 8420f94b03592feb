#include "apps/doctor_app.hpp"

#include <filesystem>

#include "apps/cli.hpp"
#include "core/config.hpp"
#include "doctor/checks.hpp"
#include "util/paths.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-doctor";
}  // namespace

int run_doctor(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(
      kTool, "Tells why something of ctxkit does not work: one line per finding, with what to do.");
  auto app = cli.app();
  bool json_out = false;
  std::string settings, claude_json;
  int timeout_ms = 5000;
  app.add_flag("--json", json_out, "print the findings as JSON");
  app.add_option("--settings", settings,
                 "the Claude Code settings.json to look at (default: ~/.claude/settings.json)")
      .option_text("FILE");
  app.add_option("--claude-json", claude_json,
                 "the file with the user's MCP servers (default: ~/.claude.json)")
      .option_text("FILE");
  app.add_option("--timeout-ms", timeout_ms, "how long a program may take to answer (5000)")
      .range(100, 600000)
      .option_text("MS");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;

  doctor::DoctorInputs in;
  in.env = ctx.env;
  in.cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  in.loc = in.cfg.locations(ctx.env);
  in.timeout = std::chrono::milliseconds(timeout_ms);
  in.version = version();
  in.settings_path =
      settings.empty() ? in.loc.claude_config_dir / "settings.json" : fs::path(settings);
  if (!claude_json.empty())
    in.claude_json_path = claude_json;
  else if (auto dir = ctx.env.get_nonempty("CLAUDE_CONFIG_DIR"))
    in.claude_json_path = fs::path(*dir) / ".claude.json";
  else
    in.claude_json_path = in.loc.home / ".claude.json";
  in.bin_dir = util::executable_dir().value_or(fs::path("."));
  {
    // Files given on the command line that are the user's own count as theirs.
    fs::path user_claude_json =
        ctx.env.get_nonempty("CLAUDE_CONFIG_DIR")
            ? fs::path(*ctx.env.get_nonempty("CLAUDE_CONFIG_DIR")) / ".claude.json"
            : in.loc.home / ".claude.json";
    std::error_code ec;
    in.default_files = fs::absolute(in.settings_path, ec).lexically_normal() ==
                           (in.loc.claude_config_dir / "settings.json").lexically_normal() &&
                       fs::absolute(in.claude_json_path, ec).lexically_normal() ==
                           user_claude_json.lexically_normal();
  }

  const auto findings = doctor::check_everything(in);
  ctx.out << (json_out ? doctor::findings_json(findings) : doctor::findings_text(findings));
  const int faults = doctor::verdict(findings).faults;
  return exit_code(faults == 0 ? ExitCode::ok : ExitCode::failure);
}

}  // namespace ctxkit::apps
