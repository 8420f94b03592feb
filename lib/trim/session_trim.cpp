#include "trim/session_trim.hpp"

#include <fmt/core.h>

#include <cstdio>

#include "archive/indexer.hpp"
#include "claude/session_locator.hpp"
#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit::trim {
namespace fs = std::filesystem;

namespace {
// Tools of Claude Code (and the form of MCP tools); anything else must occur in the session.
bool known_tool(const std::string& name) {
  static const std::set<std::string> builtin = {
      "Agent",    "Bash",       "BashOutput",   "Edit",       "ExitPlanMode", "Glob",
      "Grep",     "KillShell",  "LS",           "MultiEdit",  "NotebookEdit", "NotebookRead",
      "Read",     "Skill",      "SlashCommand", "Task",       "TaskCreate",   "TaskGet",
      "TaskList", "TaskOutput", "TaskStop",     "TaskUpdate", "TodoRead",     "TodoWrite",
      "WebFetch", "WebSearch",  "Write"};
  return builtin.count(name) || name.starts_with("mcp__");
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

// Records the trimmed copy as derived from the original; a failure is returned as a note.
std::string record_lineage(const SessionTrim& t, const core::Locations& loc,
                           const core::Config& cfg) {
  std::string note;
  std::optional<store::StateStore> store = store::open_state(loc, cfg, note);
  if (!store) return note;
  store::SessionRecord parent, child;
  parent.session_id = t.parent_id;
  parent.project = t.project;
  parent.transcript = t.transcript.string();
  parent.cwd = t.outcome.cwd;
  parent.started_at = t.outcome.first_timestamp;
  child.session_id = t.new_session_id;
  child.project = t.project;
  child.transcript = t.outcome.output.string();
  child.cwd = t.outcome.cwd;
  child.started_at = t.trimmed_at;
  auto r =
      store->record_derivation(parent, child, "trim", t.context_percent,
                               static_cast<int64_t>(t.outcome.stats.tokens_saved()), t.trimmed_at);
  return r ? std::string() : r.error().message;
}
}  // namespace

std::string resume_command(const std::string& cwd, const std::string& session_id) {
  return cwd.empty()
             ? fmt::format("claude --resume {}", session_id)
             : fmt::format("cd {} && claude --resume {}", util::shell_quote(cwd), session_id);
}

Result<SessionTrim> trim_and_record(const SessionTrimRequest& request, const core::Config& cfg,
                                    const util::Env& env) {
  const core::Locations loc = cfg.locations(env);
  auto transcript = claude::locate_session(
      request.session, env, loc, std::chrono::milliseconds(cfg.context.transcript_wait_ms));
  if (!transcript) return std::unexpected(transcript.error());

  SessionTrim t;
  t.transcript = *transcript;
  t.parent_id = t.transcript.stem().string();
  t.project = t.transcript.parent_path().filename().string();
  t.archive = archive::archive_location(loc, t.project, t.parent_id);
  t.dry_run = request.dry_run;
  t.new_session_id = request.new_session_id.empty() ? util::random_uuid() : request.new_session_id;
  t.threshold = static_cast<size_t>(request.threshold.value_or(cfg.context.trim_threshold_chars));
  t.tools = request.tools ? *request.tools
                          : std::set<std::string>(cfg.context.trim_target_tools.begin(),
                                                  cfg.context.trim_target_tools.end());
  t.keep_recent = request.keep_recent;
  t.trimmed_at =
      request.trimmed_at.empty() ? util::format_iso8601_ms(util::now_ms()) : request.trimmed_at;

  TrimRequest req;
  req.transcript = t.transcript;
  req.new_session_id = t.new_session_id;
  req.threshold = t.threshold;
  req.tools = t.tools;
  req.keep_recent = t.keep_recent;
  req.dry_run = t.dry_run;
  req.archive_transcript = t.archive.transcript;
  req.archive_side_dir = t.archive.side_dir;
  req.trimmed_at = t.trimmed_at;
  req.tool_version = request.tool_version;
  t.min_tokens_saved = req.min_tokens_saved;

  if (!t.dry_run) {
    if (auto made = util::make_private_dirs(loc.state_dir, loc.state_dir); !made)
      return fail(fmt::format("state directory: {}", made.error().message));
  }
  for (const auto& tool : t.tools) {
    if (known_tool(tool)) continue;
    auto used = file_contains(t.transcript, fmt::format("\"name\":\"{}\"", tool));
    if (!used) return std::unexpected(used.error());
    if (!*used)
      return fail(fmt::format(
          "unknown tool '{}' (not a Claude Code tool and not used in this session)", tool));
  }
  if (!t.dry_run) {
    // Copies a killed trim left behind (the new session's and the archive's).
    archive::remove_stale_temporaries(t.transcript.parent_path());
    archive::remove_stale_temporaries(t.archive.transcript.parent_path());
  }
  auto outcome = trim_session(req);
  if (!outcome) return std::unexpected(outcome.error());
  t.outcome = std::move(*outcome);

  if (auto p = context::transcript_percent(
          t.transcript, cfg.context,
          context::client_compaction_settings(env, core::project_start_dir(env, ""))))
    t.context_percent = *p;
  if (t.outcome.written) t.warning = record_lineage(t, loc, cfg);

  // Whatever is archived becomes searchable, after this trim returns: a detached indexer (waiting
  // for any other one) indexes what is pending in the archive. If it is killed, the next indexer,
  // or ctx-search before it answers, finishes the work.
  if (!t.dry_run && !archive::project_is_excluded(t.project, cfg.archive)) {
    const core::ArchiveConfig archive_cfg = cfg.archive;
    auto index = [loc, archive_cfg] { archive::run_indexer(loc, archive_cfg); };
    if (request.in_background)
      request.in_background(index);
    else
      util::detach(index);
    t.indexing_started = true;
  }
  return t;
}

}  // namespace ctxkit::trim
