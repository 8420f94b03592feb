#include "apps/trim_app.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "archive/archive.hpp"
#include "archive/indexer.hpp"
#include "claude/session_locator.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "trim/trim_session.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/shell.hpp"
#include "util/text.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-trim";

// Tools of Claude Code (and the form of MCP tools); anything else must occur in the session.
bool known_tool(const std::string& name, const std::set<std::string>& seen) {
  static const std::set<std::string> builtin = {
      "Agent",    "Bash",       "BashOutput",   "Edit",       "ExitPlanMode", "Glob",
      "Grep",     "KillShell",  "LS",           "MultiEdit",  "NotebookEdit", "NotebookRead",
      "Read",     "Skill",      "SlashCommand", "Task",       "TaskCreate",   "TaskGet",
      "TaskList", "TaskOutput", "TaskStop",     "TaskUpdate", "TodoRead",     "TodoWrite",
      "WebFetch", "WebSearch",  "Write"};
  return builtin.count(name) || name.starts_with("mcp__") || seen.count(name);
}

// Whether the file contains `needle` (streamed; a match across two reads is found too).
Result<bool> file_contains(const fs::path& p, const std::string& needle) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return fail(fmt::format("reading {}: cannot open", p.string()));
  std::string buf(1 << 20, '\0'), carry;
  bool found = false;
  while (!found) {
    size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n == 0) break;
    std::string window = carry + buf.substr(0, n);
    found = window.find(needle) != std::string::npos;
    carry = window.substr(window.size() > needle.size() ? window.size() - needle.size() : 0);
  }
  std::fclose(f);
  return found;
}

std::string thousands(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<size_t>(i), 1, ',');
  return s;
}
// "3144 tool results, 6 images and 2 tool inputs": results cut to a notice, images replaced by a
// placeholder (also in results whose text was kept), tool inputs shortened.
std::string what_was_cut(const TrimStats& s) {
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

  std::string cwd_hint;
  Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, cwd_hint)});
  const Locations loc = cfg.locations(ctx.env);
  auto transcript = locate_session(session, ctx.env, loc);
  if (!transcript) return error(transcript.error().message);
  std::set<std::string> tools(cfg.context.trim_target_tools.begin(),
                              cfg.context.trim_target_tools.end());
  if (!tools_arg.empty()) {
    tools.clear();
    for (auto& t : util::split_list(tools_arg)) tools.insert(std::move(t));
    if (tools.empty()) return error("--tools names no tool");
  }

  const fs::path path = *transcript;
  const std::string parent_id = path.stem().string();
  const std::string project = path.parent_path().filename().string();
  ArchiveLocation where = archive_location(loc, project, parent_id);

  TrimRequest req;
  req.transcript = path;
  req.new_session_id = util::random_uuid();
  req.threshold = static_cast<size_t>(threshold.value_or(cfg.context.trim_threshold_chars));
  req.tools = tools;
  req.keep_recent = static_cast<size_t>(keep_recent);
  req.dry_run = dry_run;
  req.archive_transcript = where.transcript;
  req.archive_side_dir = where.side_dir;
  req.trimmed_at = util::format_iso8601_ms(util::now_ms());
  req.tool_version = fmt::format("ctxkit {}", version());

  if (!dry_run) {
    if (auto made = util::make_private_dirs(loc.state_dir, loc.state_dir); !made)
      return error(fmt::format("state directory: {}", made.error().message));
  }
  for (const auto& t : tools) {
    if (known_tool(t, {})) continue;
    auto used = file_contains(path, fmt::format("\"name\":\"{}\"", t));
    if (!used) return error(used.error().message);
    if (!*used)
      return error(fmt::format(
          "unknown tool '{}' (not a Claude Code tool and not used in this session)", t));
  }
  if (!dry_run) {
    // Copies a killed trim left behind (the new session's and the archive's).
    remove_stale_temporaries(path.parent_path());
    remove_stale_temporaries(where.transcript.parent_path());
  }
  auto outcome = trim_session(req);
  if (!outcome) return error(outcome.error().message);
  const TrimOutcome& o = *outcome;
  const TrimStats& s = o.stats;

  // Record lineage (trim only when something was written).
  std::string state_note;
  std::optional<int64_t> pct;
  if (auto p = transcript_percent(
          path, cfg.context,
          read_compaction_settings(
              ctx.env, client_settings_files(ctx.env, project_start_dir(ctx.env, cwd_hint)))))
    pct = *p;
  if (o.written) {
    std::optional<StateStore> store = open_state(loc, cfg, state_note);
    if (store) {
      SessionRecord parent, child;
      parent.session_id = parent_id;
      parent.project = project;
      parent.transcript = path.string();
      parent.cwd = o.cwd;
      parent.started_at = o.first_timestamp;
      child.session_id = req.new_session_id;
      child.project = project;
      child.transcript = o.output.string();
      child.cwd = o.cwd;
      child.started_at = req.trimmed_at;
      auto r = store->record_derivation(parent, child, "trim", pct,
                                        static_cast<int64_t>(s.tokens_saved()), req.trimmed_at);
      if (!r) state_note = r.error().message;
    }
  }

  // Whatever is archived becomes searchable, after this program returns: a detached indexer
  // (waiting for any other one) indexes what is pending in the archive. If it is killed, the next
  // indexer, or ctx-search before it answers, finishes the work.
  if (!dry_run && !project_is_excluded(project, cfg.archive)) {
    const ArchiveConfig archive_cfg = cfg.archive;
    util::detach([loc, archive_cfg] { run_indexer(loc, archive_cfg); });
  }

  const std::string resume = o.cwd.empty()
                                 ? fmt::format("claude --resume {}", req.new_session_id)
                                 : fmt::format("cd {} && claude --resume {}",
                                               util::shell_quote(o.cwd), req.new_session_id);
  if (json_out) {
    ojson j;
    j["dry_run"] = dry_run;
    j["written"] = o.written;
    j["parent_session_id"] = parent_id;
    j["parent_transcript"] = path.string();
    if (o.written) {
      j["session_id"] = req.new_session_id;
      j["transcript"] = o.output.string();
      j["resume_command"] = resume;
    }
    if (!dry_run) j["archive"] = where.transcript.string();
    j["threshold"] = req.threshold;
    j["tools"] = tools;
    j["keep_recent"] = req.keep_recent;
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
    std::vector<std::pair<std::string, ToolTrimStats>> rows(s.per_tool.begin(), s.per_tool.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second.result_chars > b.second.result_chars;
    });
    for (const auto& [tool, t] : rows) {
      ctx.out << fmt::format("{:<20} {:>8} {:>12} {:>8} {:>14}{}\n", tool, t.results,
                             thousands(t.result_chars / 4), t.trimmed, thousands(t.chars_saved / 4),
                             tools.count(tool) ? "" : "  (not a target tool)");
    }
    ctx.out << fmt::format("would trim {}: about {} tokens saved (threshold {} characters)\n",
                           what_was_cut(s), thousands(s.tokens_saved()), req.threshold);
    if (s.tokens_saved() < req.min_tokens_saved)
      ctx.out << fmt::format("that is below {} tokens: ctx-trim would write nothing\n",
                             req.min_tokens_saved);
    return 0;
  }
  if (!o.written) {
    ctx.out << fmt::format(
        "Nothing worth trimming: about {} tokens would be saved (less than {}). No new session was "
        "written.\n",
        thousands(s.tokens_saved()), req.min_tokens_saved);
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
  ctx.out << fmt::format("New session {} (trimmed from {}).\n", req.new_session_id, parent_id);
  ctx.out << fmt::format("The original is untouched and archived at {}.\n",
                         where.transcript.string());
  if (o.late_lines > 0)
    ctx.out << fmt::format(
        "Note: {} lines were added to the session after the snapshot; they are not in the trimmed "
        "copy.\n",
        o.late_lines);
  ctx.out << "Continue in the trimmed session with:\n  " << resume << '\n';
  if (!state_note.empty()) print_note(ctx.err, kTool, state_note);
  return 0;
}

}  // namespace ctxkit
