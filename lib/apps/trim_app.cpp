#include "apps/trim_app.hpp"

#include <fmt/core.h>

#include <set>

#include "apps/cli.hpp"
#include "core/config.hpp"
#include "trim/session_trim.hpp"
#include "trim/trim_report.hpp"
#include "util/json_io.hpp"
#include "util/text.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-trim";
}  // namespace

int run_trim(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Writes a trimmed copy of a Claude Code session under a new id: large old tool "
                 "outputs are cut to "
                 "their first characters plus a notice pointing at the archived original. The "
                 "original is never modified.");
  auto app = cli.app();
  std::string session, tools_arg;
  bool dry_run = false, json_out = false;
  std::optional<int64_t> threshold;
  int64_t keep_recent = 0;
  app.add_option("session", session,
                 "session id, transcript path, or (default) $CLAUDE_CODE_SESSION_ID");
  app.add_flag("--dry-run", dry_run,
               "write nothing; report per tool how many results and tokens would be trimmed");
  app.add_flag("--json", json_out, "print the result as one JSON object");
  app.add_option("--threshold", threshold,
                 "characters kept of a long tool output (default: trim_threshold_chars)")
      .range(int64_t{1}, int64_t{100000000});
  app.add_option("--tools", tools_arg,
                 "comma-separated tools whose outputs are trimmed (default: trim_target_tools)");
  app.add_option("--keep-recent", keep_recent,
                 "leave the tool results of the last N assistant responses untouched")
      .range(int64_t{0}, int64_t{1000000});
  cli.add_show_config();
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);

  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  trim::SessionTrimRequest request;
  request.session = session;
  request.threshold = threshold;
  if (!tools_arg.empty()) {
    std::set<std::string> tools;
    for (auto& t : util::split_list(tools_arg)) tools.insert(std::move(t));
    if (tools.empty()) return error("--tools names no tool");
    request.tools = std::move(tools);
  }
  request.keep_recent = static_cast<size_t>(keep_recent);
  request.dry_run = dry_run;
  request.tool_version = fmt::format("ctxkit {}", version());
  auto trimmed = trim::trim_and_record(request, cfg, ctx.env);
  if (!trimmed) return error(trimmed.error().message);
  const trim::SessionTrim& done = *trimmed;
  if (json_out) {
    ctx.out << util::dump_json(trim::trim_report_json(done)) << '\n';
    return 0;
  }
  ctx.out << trim::trim_report_text(done);
  if (!done.dry_run && !done.warning.empty()) print_note(ctx.err, kTool, done.warning);
  return 0;
}

}  // namespace ctxkit::apps
