#include "apps/trim_app.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "core/config.hpp"
#include "trim/session_trim.hpp"
#include "util/text.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-trim";

std::string thousands(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<size_t>(i), 1, ',');
  return s;
}
// "3144 tool results, 6 images and 2 tool inputs": results cut to a notice, images replaced by a
// placeholder (also in results whose text was kept), tool inputs shortened.
std::string what_was_cut(const trim::TrimStats& s) {
  const uint64_t cut = s.results_trimmed - s.results_images_only;
  auto n = [](uint64_t k, const char* one, const char* many) {
    return fmt::format("{} {}", thousands(k), k == 1 ? one : many);
  };
  return fmt::format("{}, {} and {}", n(cut, "tool result", "tool results"),
                     n(s.images_replaced, "image", "images"),
                     n(s.inputs_trimmed, "tool input", "tool inputs"));
}
}  // namespace

int run_trim(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Writes a trimmed copy of a Claude Code session under a new id: large old tool "
                 "outputs are cut to "
                 "their first characters plus a notice pointing at the archived original. The "
                 "original is never modified.");
  CLI::App& app = cli.app();
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
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  app.add_option("--tools", tools_arg,
                 "comma-separated tools whose outputs are trimmed (default: trim_target_tools)");
  app.add_option("--keep-recent", keep_recent,
                 "leave the tool results of the last N assistant responses untouched")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
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
  const trim::TrimOutcome& o = done.outcome;
  const trim::TrimStats& s = o.stats;
  const fs::path& path = done.transcript;
  const std::string& parent_id = done.parent_id;
  const std::set<std::string>& tools = done.tools;
  const std::string& state_note = done.warning;
  const std::optional<int64_t>& pct = done.context_percent;

  const std::string resume = trim::resume_command(o.cwd, done.new_session_id);
  if (json_out) {
    ojson j;
    j["dry_run"] = dry_run;
    j["written"] = o.written;
    j["parent_session_id"] = parent_id;
    j["parent_transcript"] = path.string();
    if (o.written) {
      j["session_id"] = done.new_session_id;
      j["transcript"] = o.output.string();
      j["resume_command"] = resume;
    }
    if (!dry_run) j["archive"] = done.archive.transcript.string();
    j["threshold"] = done.threshold;
    j["tools"] = tools;
    j["keep_recent"] = done.keep_recent;
    j["results_trimmed"] = s.results_trimmed;
    j["inputs_trimmed"] = s.inputs_trimmed;
    j["images_replaced"] = s.images_replaced;
    j["results_cut"] = s.results_trimmed - s.results_images_only;
    j["chars_saved"] = s.chars_saved;
    j["tokens_saved"] = s.tokens_saved();
    j["context_percent"] = pct ? ojson(*pct) : ojson(nullptr);
    ojson per = ojson::object();
    for (const auto& [tool, t] : s.per_tool) {
      per[tool] = {{"results", t.results},
                   {"result_tokens", t.result_chars / 4},
                   {"trimmed", t.trimmed},
                   {"inputs_trimmed", t.inputs_trimmed},
                   {"tokens_saved", t.chars_saved / 4},
                   {"target", tools.count(tool) > 0}};
    }
    j["per_tool"] = per;
    j["late_lines"] = o.late_lines;
    if (!state_note.empty()) j["warning"] = state_note;
    ctx.out << j.dump() << '\n';
    return 0;
  }

  if (dry_run) {
    ctx.out << fmt::format("{} (dry run: nothing written)\n", path.string());
    ctx.out << fmt::format("{:<20} {:>8} {:>12} {:>8} {:>14}\n", "tool", "results", "tokens",
                           "trimmed", "tokens saved");
    std::vector<std::pair<std::string, trim::ToolTrimStats>> rows(s.per_tool.begin(),
                                                                  s.per_tool.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second.result_chars > b.second.result_chars;
    });
    for (const auto& [tool, t] : rows) {
      ctx.out << fmt::format("{:<20} {:>8} {:>12} {:>8} {:>14}{}\n", tool, t.results,
                             thousands(t.result_chars / 4), t.trimmed, thousands(t.chars_saved / 4),
                             tools.count(tool) ? "" : "  (not a target tool)");
    }
    ctx.out << fmt::format("would trim {}: about {} tokens saved (threshold {} characters)\n",
                           what_was_cut(s), thousands(s.tokens_saved()), done.threshold);
    if (s.tokens_saved() < done.min_tokens_saved)
      ctx.out << fmt::format("that is below {} tokens: ctx-trim would write nothing\n",
                             done.min_tokens_saved);
    return 0;
  }
  if (!o.written) {
    ctx.out << fmt::format(
        "Nothing worth trimming: about {} tokens would be saved (less than {}). No new session was "
        "written.\n",
        thousands(s.tokens_saved()), done.min_tokens_saved);
    if (!state_note.empty()) print_note(ctx.err, kTool, state_note);
    return 0;
  }
  std::vector<std::string> by_tool;
  for (const auto& [tool, t] : s.per_tool)
    if (t.trimmed || t.inputs_trimmed)
      by_tool.push_back(fmt::format("{} {}", tool, t.trimmed + t.inputs_trimmed));
  ctx.out << fmt::format("Trimmed {} ({}): about {} tokens saved ({} characters).\n",
                         what_was_cut(s), fmt::join(by_tool, ", "), thousands(s.tokens_saved()),
                         thousands(s.chars_saved));
  ctx.out << fmt::format("New session {} (trimmed from {}).\n", done.new_session_id, parent_id);
  ctx.out << fmt::format("The original is untouched and archived at {}.\n",
                         done.archive.transcript.string());
  if (o.late_lines > 0)
    ctx.out << fmt::format(
        "Note: {} lines were added to the session after the snapshot; they are not in the trimmed "
        "copy.\n",
        o.late_lines);
  ctx.out << "Continue in the trimmed session with:\n  " << resume << '\n';
  if (!state_note.empty()) print_note(ctx.err, kTool, state_note);
  return 0;
}

}  // namespace ctxkit::apps
