#include "doctor/checks.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "archive/indexer.hpp"
#include "archive/output_archive.hpp"
#include "claude/install_check.hpp"
#include "claude/session_locator.hpp"
#include "claude_code_range.hpp"
#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "core/hook_stamp.hpp"
#include "install/settings_edit.hpp"
#include "store/db_check.hpp"
#include "store/meter_store.hpp"
#include "store/search_index.hpp"
#include "store/state_store.hpp"
#include "util/bounded_run.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"

namespace ctxkit::doctor {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Every program of an install.
constexpr const char* kPrograms[] = {
    "ctx-remind",   "ctx-status",   "ctx-session-hook", "ctx-gate",
    "ctx-settings", "ctx-trim",     "ctx-rollover",     "ctx-lineage",
    "ctx-search",   "ctx-workflow", "ctx-workflow-mcp", "ctx-doctor",
    "ctx-run",      "ctx-report",   "ctx-cap",          "ctx-pin"};

// Everything the checks share: the inputs and the findings so far.
struct Doctor {
  const util::Env& env;
  const core::Config& cfg;
  const core::Locations& loc;
  const std::string home;
  const fs::path& settings_path;
  const fs::path& claude_json_path;
  const fs::path& bin_dir;
  const std::chrono::milliseconds timeout;
  const bool default_files;
  const std::string& version;
  std::vector<Finding> findings;
  std::string claude_version;  // what `claude --version` said (check_claude), empty if nothing

  explicit Doctor(const DoctorInputs& in)
      : env(in.env),
        cfg(in.cfg),
        loc(in.loc),
        home(in.loc.home.string()),
        settings_path(in.settings_path),
        claude_json_path(in.claude_json_path),
        bin_dir(in.bin_dir),
        timeout(in.timeout),
        default_files(in.default_files),
        version(in.version) {}

  void add(const std::string& area, Status s, std::string message, std::string fix = {}) {
    findings.push_back({area, s, std::move(message), std::move(fix)});
  }
  std::string install_command() const {
    return fmt::format("ctx-settings install --settings {} --bin-dir {}",
                       util::shell_quote(settings_path.string()),
                       util::shell_quote(bin_dir.string()));
  }
  // The one command that makes this install the registered one again (hooks, status line and MCP
  // servers, taking over those of another install): the whole set-up of this doctor's folder, or
  // for files given on the command line, their settings file.
  std::string setup_command() const {
    if (!default_files) return install_command();
    return util::shell_quote((bin_dir / "ctx-settings").string()) + " install";
  }
  std::map<std::string, std::string> child_env() const {
    return {env.vars().begin(), env.vars().end()};
  }
};

// A JSON file of the client's, or null when it is missing or blank; an error when it cannot be read
// or parsed (install::read_json_file, at most 64 MiB).
Result<json> read_json_file(const fs::path& p) {
  auto doc = install::read_json_file(p, true, 64u << 20);
  if (!doc) return std::unexpected(doc.error());
  return json(*doc);
}

// Why `path` cannot be run as a hook's program, or empty when it can.
std::string not_runnable(const std::string& path) {
  if (path.empty() || path.front() != '/') return fmt::format("'{}' is not an absolute path", path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fmt::format("{} does not exist", path);
  if (!S_ISREG(st.st_mode)) return fmt::format("{} is not a regular file", path);
  if (::access(path.c_str(), X_OK) != 0) return fmt::format("{} is not executable", path);
  return {};
}

std::string ago(int64_t then_ms) {
  int64_t s = std::max<int64_t>(0, (util::now_ms() - then_ms) / 1000);
  std::string when = s < 60      ? fmt::format("{} s ago", s)
                     : s < 3600  ? fmt::format("{} min ago", s / 60)
                     : s < 86400 ? fmt::format("{} h ago", s / 3600)
                                 : fmt::format("{} days ago", s / 86400);
  return fmt::format("{} ({})", when, util::format_iso8601_ms(then_ms));
}

void check_programs(Doctor& d) {
  int answered = 0;
  for (const char* name : kPrograms) {
    std::string path;
    if (fs::path beside = d.bin_dir / name; not_runnable(beside.string()).empty()) {
      path = beside.string();
    } else if (auto found = util::find_in_path(name, d.env.get("PATH").value_or(""))) {
      path = *found;
    } else {
      d.add("programs", Status::Fault,
            fmt::format("{} is not installed (not in {} nor on PATH)", name, d.bin_dir.string()),
            "install ctxkit again (install.sh, or the package)");
      continue;
    }
    util::ProcessSpec spec;
    spec.argv = {path, "--version"};
    spec.env = d.child_env();
    spec.timeout = d.timeout;
    auto run = util::run_bounded(spec, 4096);
    const util::ProcessResult* r = run ? &run->result : nullptr;
    if (!run || r->timed_out || r->exit_code == 127 || r->exit_code >= 128) {
      d.add("programs", Status::Fault,
            fmt::format("{} does not run: {}", path,
                        !run           ? run.error().message
                        : r->timed_out ? "no answer to --version"
                                       : fmt::format("exit {}", r->exit_code)),
            "install ctxkit again (a missing library or a damaged file)");
      continue;
    }
    std::string expect = fmt::format("{} {}", name, d.version);
    if (r->exit_code != 0 || r->out.substr(0, r->out.find('\n')) != expect) {
      std::string said = r->out.substr(0, r->out.find('\n'));
      d.add("programs", Status::Warning,
            fmt::format("{} does not answer --version with '{}'{}", path, expect,
                        said.empty() ? std::string() : fmt::format(" (said '{}')", said)),
            "install every program from one build");
      continue;
    }
    ++answered;
  }
  if (answered > 0)
    d.add("programs", Status::Ok,
          fmt::format("{} of {} programs answer --version ({}), in {}", answered,
                      std::size(kPrograms), d.version, d.bin_dir.string()));
}

// The hooks of one install (settings.json or a plugin's hooks.json) against what ctxkit registers.
void check_hooks(Doctor& d, const std::vector<claude::CommandHook>& hooks, const std::string& where,
                 const std::string& plugin_root, const std::string& fix,
                 const std::string& duplicate_fix) {
  int good = 0;
  for (const auto& cov : claude::match_hooks(hooks, d.home, plugin_root)) {
    std::string what =
        fmt::format("{}{} hook {}", cov.expected.event,
                    cov.expected.matcher.empty() ? std::string() : "[" + cov.expected.matcher + "]",
                    cov.program);
    if (cov.found.empty()) {
      d.add("hooks", Status::Fault, fmt::format("{} is not registered in {}", what, where), fix);
      continue;
    }
    if (cov.found.size() > 1) {
      d.add("hooks", Status::Fault,
            fmt::format("{} is registered {} times in {}: it runs that often", what,
                        cov.found.size(), where),
            duplicate_fix);
      continue;
    }
    if (auto why = not_runnable(cov.found.front().front()); !why.empty()) {
      d.add("hooks", Status::Fault, fmt::format("{}: {}", what, why), fix);
      continue;
    }
    ++good;
  }
  if (good > 0)
    d.add("hooks", Status::Ok,
          fmt::format("{} hooks registered in {}, each an executable file", good, where));
}

void check_status_line(Doctor& d, const json& settings) {
  const json* line = nullptr;
  if (settings.is_object())
    if (auto it = settings.find("statusLine"); it != settings.end() && it->is_object()) line = &*it;
  std::string command = line && line->contains("command") && (*line)["command"].is_string()
                            ? (*line)["command"].get<std::string>()
                            : "";
  const std::string ours = (d.bin_dir / "ctx-status").string();
  if (command.empty()) {
    d.add(
        "status line", Status::Warning,
        "no status line: ctxkit reads the context figure from the transcript instead of the "
        "client's exact one",
        fmt::format("set \"statusLine\" in {} to {{\"type\":\"command\",\"command\":\"{}\"}} ({})",
                    d.settings_path.string(), ours, d.install_command()));
    return;
  }
  auto words = claude::command_words(command, d.home);
  if (!words || fs::path(words->front()).filename() != "ctx-status") {
    d.add("status line", Status::Warning,
          fmt::format("the status line runs '{}', not ctx-status", command),
          fmt::format("keep it and show both: set its command to {} --wrap {}",
                      util::shell_quote(ours), util::shell_quote(command)));
    return;
  }
  if (auto why = not_runnable(words->front()); !why.empty()) {
    d.add("status line", Status::Fault, "status line: " + why, d.install_command());
    return;
  }
  std::string wrapped;
  for (size_t i = 1; i + 1 < words->size(); ++i)
    if ((*words)[i] == "--wrap") wrapped = (*words)[i + 1];
  if (wrapped.empty()) wrapped = d.cfg.status.command;
  if (!wrapped.empty()) {
    auto argv = util::command_argv(wrapped);
    if (auto found = util::find_in_path(argv.front(), d.env.get("PATH").value_or("")); !found) {
      d.add("status line", Status::Warning,
            fmt::format("the wrapped status command '{}': {}", wrapped, found.error().message),
            "fix its path in [status] command (config.toml) or in --wrap");
      return;
    }
    d.add("status line", Status::Ok, fmt::format("ctx-status, beside '{}'", wrapped));
    return;
  }
  d.add("status line", Status::Ok, fmt::format("ctx-status ({})", words->front()));
}

// One of ctxkit's MCP servers: `what` names it, `program` is what it runs.
struct McpServerKind {
  const char* what;
  const char* program;
  const char* name;  // its name in "mcpServers" when ctxkit registers it
};
constexpr McpServerKind kWorkflowMcp{"the workflow MCP server", "ctx-workflow-mcp",
                                     claude::kWorkflowServerName};
constexpr McpServerKind kArchiveMcp{"the archive's search MCP server", "ctx-archive-mcp",
                                    claude::kArchiveServerName};

// How to register that server in the user's MCP configuration.
std::string register_command(const Doctor& d, const McpServerKind& kind, bool replace) {
  std::string cmd = fmt::format("ctx-workflow-mcp register --config {}",
                                util::shell_quote(d.claude_json_path.string()));
  if (std::string_view(kind.program) != kWorkflowMcp.program)
    cmd += fmt::format(" --name {} --command {}", kind.name,
                       util::shell_quote((d.bin_dir / kind.program).string()));
  return replace ? cmd + " --replace" : cmd;
}

void check_mcp(Doctor& d, const std::vector<claude::McpServerFound>& servers,
               const std::string& where, const McpServerKind& kind) {
  if (servers.empty()) {
    d.add("mcp", Status::Fault,
          fmt::format("{} ({}) is not registered in {}", kind.what, kind.program, where),
          register_command(d, kind, false));
    return;
  }
  if (servers.size() > 1)
    d.add("mcp", Status::Warning,
          fmt::format("{} is registered {} times in {}", kind.program, servers.size(), where),
          "keep one entry in \"mcpServers\"");
  const auto& s = servers.front();
  if (auto why = not_runnable(s.argv.front()); !why.empty()) {
    d.add("mcp", Status::Fault, fmt::format("MCP server '{}': {}", s.name, why),
          register_command(d, kind, true));
    return;
  }
  util::ProcessSpec spec;
  spec.argv = s.argv;
  spec.env = d.child_env();
  spec.timeout = d.timeout;
  spec.stdin_data =
      util::dump_json(json{{"jsonrpc", "2.0"},
                           {"id", 0},
                           {"method", "initialize"},
                           {"params",
                            {{"protocolVersion", "2025-11-25"},
                             {"capabilities", json::object()},
                             {"clientInfo", {{"name", "ctx-doctor"}, {"version", d.version}}}}}}) +
      "\n";
  auto run = util::run_bounded(spec, 1 << 20);
  const util::ProcessResult* r = run ? &run->result : nullptr;
  std::string problem;
  json answer;
  if (!run)
    problem = run.error().message;
  else if (r->timed_out)
    problem = fmt::format("no answer to initialize within {} ms", d.timeout.count());
  else {
    answer = util::parse_json(r->out.substr(0, r->out.find('\n')));
    if (answer.is_discarded() || !answer.is_object() || !answer.contains("result") ||
        !answer["result"].is_object())
      problem =
          fmt::format("no answer to initialize (exit {}{})", r->exit_code,
                      r->err.empty() ? std::string() : ": " + r->err.substr(0, r->err.find('\n')));
  }
  if (!problem.empty()) {
    d.add("mcp", Status::Fault,
          fmt::format("MCP server '{}' ({}): {}", s.name, s.argv.front(), problem),
          fmt::format("run it by hand: {} < /dev/null; then install ctxkit again",
                      util::shell_quote(s.argv.front())));
    return;
  }
  const json& result = answer["result"];
  std::string server = result.contains("serverInfo") && result["serverInfo"].is_object()
                           ? result["serverInfo"].value("name", std::string()) + " " +
                                 result["serverInfo"].value("version", std::string())
                           : std::string("?");
  d.add("mcp", Status::Ok,
        fmt::format("MCP server '{}' answers initialize ({}, protocol {})", s.name, server,
                    result.value("protocolVersion", std::string("?"))));
}

void check_claude(Doctor& d) {
  const std::string& bin = d.cfg.rollover.claude_bin;
  auto found = util::find_in_path(bin, d.env.get("PATH").value_or(""));
  if (!found) {
    d.add("claude", Status::Warning,
          fmt::format("{}: Claude Code is needed for rollovers and the runner",
                      found.error().message),
          "install Claude Code, or set rollover.claude_bin in config.toml");
    return;
  }
  util::ProcessSpec spec;
  spec.argv = {*found, "--version"};
  spec.env = d.child_env();
  spec.timeout = std::max(d.timeout, std::chrono::milliseconds(10000));
  auto run = util::run_bounded(spec, 4096);
  std::string v = run && !run->result.timed_out && run->result.exit_code == 0
                      ? claude::claude_version_of(run->result.out)
                      : std::string();
  if (v.empty()) {
    d.add("claude", Status::Warning,
          fmt::format("{} does not tell its version (claude --version)", *found),
          "check that it is Claude Code and that it runs");
    return;
  }
  d.claude_version = v;
  // The supported range (cmake/claude-code-range.txt): checked at both ends, payloads,
  // transcripts, hooks and MCP.
  constexpr const char* oldest = CTXKIT_CLAUDE_OLDEST;
  constexpr const char* newest = CTXKIT_CLAUDE_NEWEST;
  if (claude::compare_versions(v, oldest) >= 0 && claude::compare_versions(v, newest) <= 0)
    return d.add("claude", Status::Ok,
                 fmt::format("Claude Code {} ({}): supported (ctxkit supports {} to {})", v, *found,
                             oldest, newest));
  if (claude::compare_versions(v, newest) > 0)
    d.add("claude", Status::Warning,
          fmt::format("Claude Code {} ({}) is newer than the newest release ctxkit was checked "
                      "against ({}): untested",
                      v, *found, newest),
          "if something misbehaves, say which version in the report");
  else
    d.add("claude", Status::Warning,
          fmt::format(
              "Claude Code {} ({}) is older than the oldest release ctxkit supports ({}): untested",
              v, *found, oldest),
          "update Claude Code");
}

// Where this client compacts the current model, and why, as `/autocompact` says it: the model of
// ANTHROPIC_MODEL, else the settings' "model", else the newest session of this project.
void check_compaction(Doctor& d) {
  const fs::path project = core::project_start_dir(d.env, "");
  std::string model = d.env.get_nonempty("ANTHROPIC_MODEL").value_or("");
  std::string from = model.empty() ? "" : "ANTHROPIC_MODEL";
  std::string version = d.claude_version;
  if (model.empty()) {
    for (const auto& file : context::client_settings_files(d.env, project)) {
      auto text = util::read_file(file);
      if (!text || text->find("\"model\"") == std::string::npos) continue;
      const auto j = util::parse_json(*text);
      if (j.is_object() && j.contains("model") && j["model"].is_string()) {
        model = j["model"].get<std::string>();
        from = file.string();
      }
    }
  }
  if (model.empty()) {
    const auto newest = claude::newest_project_transcript(d.loc, project);
    if (newest) {
      if (auto scan = context::scan_transcript_tail(*newest, ""); scan && scan->reading) {
        model = scan->reading->model;
        from = "the newest session of " + project.string();
        if (version.empty()) version = scan->reading->client_version;
      }
    }
  }
  if (model.empty())
    return d.add("compaction", Status::Ok,
                 "no model named (ANTHROPIC_MODEL, the settings' \"model\", a session of this "
                 "project): where the client compacts is shown once a session has run");
  const context::CompactionSettings settings = context::client_compaction_settings(d.env, project);
  const int64_t window =
      std::max<int64_t>(context::model_window(settings, model, version), 200'000);
  const context::CompactionPoint p = context::compaction_point(settings, window, model, version);
  std::string text = fmt::format("{} ({}) in a {} window: {}", model, from,
                                 context::short_tokens(window), context::describe_point(p));
  if (p.newer_than_recorded)
    return d.add(
        "compaction", Status::Warning,
        fmt::format("{}; Claude Code {} is newer than the newest release whose rules "
                    "ctxkit records, so those rules ({}) are used",
                    text, version.empty() ? "of unknown version" : version, p.rules_version),
        "if the figures look wrong, set [context] reserved_tokens or report the release");
  d.add("compaction", Status::Ok, text);
}

// A private file's or folder's mode, when it lets others in.
void check_private(Doctor& d, const std::string& area, const fs::path& p, bool dir) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return;
  if (st.st_uid != ::geteuid()) {
    d.add(area, Status::Fault,
          fmt::format("{} belongs to another user (uid {})", p.string(), st.st_uid),
          "use a state folder of your own (state.dir)");
    return;
  }
  if ((st.st_mode & 077) != 0)
    d.add(area, Status::Fault,
          fmt::format("{} is open to others (mode {:04o}, should be {})", p.string(),
                      st.st_mode & 07777, dir ? "0700" : "0600"),
          fmt::format("chmod {} {}", dir ? "700" : "600", util::shell_quote(p.string())));
}

void check_db(Doctor& d, const std::string& area, const fs::path& db, int expected_version,
              bool rebuilt) {
  check_private(d, area, db, false);
  auto c = store::check_database(db);
  std::string aside = fmt::format("mv {} {}", util::shell_quote(db.string()),
                                  util::shell_quote(db.string() + ".corrupt"));
  if (!c) {
    std::string why = c.error().message;
    if (why.starts_with(db.string() + ": ")) why.erase(0, db.string().size() + 2);
    d.add(area, Status::Fault, fmt::format("{} cannot be read: {}", db.string(), why),
          rebuilt ? aside + " (the index is rebuilt from the archive)"
                  : aside + " (the next hook starts a new one)");
    return;
  }
  if (c->integrity != "ok") {
    d.add(area, Status::Fault, fmt::format("{} is damaged: {}", db.string(), c->integrity),
          rebuilt ? aside + " (the index is rebuilt from the archive)"
                  : aside + " (the next hook starts a new one)");
    return;
  }
  if (c->user_version > expected_version) {
    d.add(area, Status::Fault,
          fmt::format("{} has schema version {}, newer than this ctxkit's {}", db.string(),
                      c->user_version, expected_version),
          "install the newer ctxkit again");
    return;
  }
  if (c->user_version < expected_version) {
    d.add(area, Status::Warning,
          fmt::format("{} has schema version {}; this ctxkit's is {}", db.string(), c->user_version,
                      expected_version),
          rebuilt ? "ctx-search rebuilds it" : "the next hook migrates it");
    return;
  }
  d.add(area, Status::Ok,
        fmt::format("{}: integrity ok, schema version {}", db.string(), c->user_version));
}

void check_state(Doctor& d) {
  std::error_code ec;
  if (!fs::exists(d.loc.state_dir, ec)) {
    d.add("state", Status::Warning,
          fmt::format("no state folder yet ({}): no hook has run", d.loc.state_dir.string()),
          "start a Claude Code session; if this stays, the hooks above do not run");
    return;
  }
  check_private(d, "state", d.loc.state_dir, true);
  // The meter database is made by the first reminder or status line, the state database by the
  // first session start: each is checked once it is there.
  const bool state_db = fs::exists(d.loc.state_db(), ec);
  const bool meter_db = fs::exists(d.loc.meter_db(), ec);
  if (!state_db && !meter_db) {
    d.add("state", Status::Warning,
          fmt::format("no state database yet ({})", d.loc.state_db().string()),
          "start a Claude Code session; the status line and the hooks create it");
    return;
  }
  if (state_db) check_db(d, "state", d.loc.state_db(), store::StateStore::kSchemaVersion, false);
  if (meter_db) check_db(d, "state", d.loc.meter_db(), store::MeterStore::kSchemaVersion, false);
}

void check_archive(Doctor& d) {
  std::error_code ec;
  const fs::path dir = d.loc.archive_dir();
  if (!fs::is_directory(dir, ec)) {
    d.add("archive", Status::Ok, "no session archived yet (sessions are archived when they end)");
    return;
  }
  check_private(d, "archive", dir, true);
  uint64_t sessions = 0;
  for (const auto& project : fs::directory_iterator(dir, ec)) {
    if (!project.is_directory(ec) || project.is_symlink(ec)) continue;
    for (const auto& f : fs::directory_iterator(project.path(), ec))
      if (f.is_regular_file(ec) && f.path().extension() == ".jsonl") ++sessions;
  }
  bool shards_ok = true, any_shard = false;
  for (int i = 0; i < archive::kIndexShards; ++i) {
    fs::path db = d.loc.index_db(i);
    if (!fs::exists(db, ec)) {
      shards_ok = false;
      continue;
    }
    any_shard = true;
    size_t before = d.findings.size();
    check_db(d, "archive", db, store::SearchIndex::kSchemaVersion, true);
    if (d.findings.size() > before && d.findings.back().status != Status::Ok)
      shards_ok = false;
    else if (d.findings.size() > before)
      d.findings.pop_back();  // one line for the index below
  }
  if (!any_shard) {
    d.add("archive", sessions ? Status::Warning : Status::Ok,
          fmt::format("{} sessions archived; no search index yet", sessions),
          sessions ? "run ctx-search with any word: it indexes what is pending first" : "");
    return;
  }
  if (!shards_ok) {
    d.add("archive", Status::Warning,
          fmt::format("{} sessions archived; the search index is incomplete", sessions),
          "run ctx-search with any word: it rebuilds what is missing");
    return;
  }
  auto index = archive::open_index_read_only(d.loc);
  if (!index) {
    d.add("archive", Status::Warning,
          fmt::format("{} sessions archived; the index cannot be read: {}", sessions,
                      index.error().message),
          "run ctx-search with any word: it rebuilds what is missing");
    return;
  }
  auto p = archive::index_progress(*index, d.loc, d.cfg.archive);
  if (!p) {
    d.add("archive", Status::Warning,
          fmt::format("{} sessions archived; the index cannot be read: {}", sessions,
                      p.error().message),
          "run ctx-search with any word: it rebuilds what is missing");
    return;
  }
  if (!p->complete()) {
    d.add("archive", Status::Warning,
          fmt::format("{} sessions archived; {} of {} not fully indexed ({} of {} KB)", sessions,
                      p->files_pending, p->files, p->indexed_bytes >> 10, p->archived_bytes >> 10),
          "run ctx-search with any word: it indexes what is pending first");
    return;
  }
  d.add("archive", Status::Ok,
        fmt::format("{} sessions archived, the search index is up to date", sessions));
}

void check_last_runs(Doctor& d, bool status_line_ours) {
  struct Hook {
    const char* program;
    const char* when;   // when it runs, for the message
    bool never_is_odd;  // "never" deserves a warning
  };
  const Hook hooks[] = {{"ctx-remind", "after every tool call", true},
                        {"ctx-session-hook", "when a session starts, stops or ends", true},
                        {"ctx-status", "on every status-line redraw", status_line_ours},
                        {"ctx-gate", "after /clear or /compact in a workflow", false},
                        {"ctx-cap", "after a Bash or MCP output over its threshold", false},
                        {"ctx-pin", "at every prompt and compaction", false}};
  for (const auto& h : hooks) {
    auto last = core::hook_last_run_ms(d.loc, h.program);
    if (last) {
      d.add("last run", Status::Ok, fmt::format("{}: {}", h.program, ago(*last)));
    } else if (h.never_is_odd) {
      d.add("last run", Status::Warning, fmt::format("{}: never (it runs {})", h.program, h.when),
            "start a Claude Code session; if it stays 'never', its registration above is wrong");
    } else {
      d.add("last run", Status::Ok, fmt::format("{}: never (it runs {})", h.program, h.when));
    }
  }
}

// Whether the live cap (ctx-cap) is on, where it archives, and whether the client can take its
// replacements (PostToolUse's updatedToolOutput, from 2.1.121).
void check_cap(Doctor& d) {
  const core::CapConfig& c = d.cfg.cap;
  if (!c.enabled) {
    d.add("cap", Status::Ok, "capping of large tool outputs is off ([cap] enabled = false)");
    return;
  }
  const auto bash = c.threshold_for("Bash"), mcp = c.threshold_for("mcp__x__y");
  auto words = [](const std::optional<int64_t>& t) {
    return t ? fmt::format("over {} characters", *t) : std::string("never");
  };
  std::string message =
      fmt::format("capping is on: Bash outputs {}, MCP outputs {}; archived in {}", words(bash),
                  words(mcp), archive::outputs_dir(d.loc).string());
  unsigned major = 0, minor = 0, patch = 0;
  if (!d.claude_version.empty() &&
      std::sscanf(d.claude_version.c_str(), "%u.%u.%u", &major, &minor, &patch) == 3 &&
      std::make_tuple(major, minor, patch) < std::make_tuple(2u, 1u, 121u)) {
    d.add("cap", Status::Warning,
          message + fmt::format("; Claude Code {} ignores a hook's replacement of an output",
                                d.claude_version),
          "update Claude Code (2.1.121 or later)");
    return;
  }
  std::error_code ec;
  if (fs::is_directory(archive::outputs_dir(d.loc), ec))
    check_private(d, "cap", archive::outputs_dir(d.loc), true);
  d.add("cap", Status::Ok, message);
}

void check_config(Doctor& d) {
  for (const auto& w : d.cfg.warnings) d.add("config", Status::Warning, w, "fix or remove the key");
  for (const auto& e : d.cfg.errors)
    d.add("config", Status::Fault, e, "fix the value (the default is used meanwhile)");
  if (d.cfg.warnings.empty() && d.cfg.errors.empty()) {
    std::vector<std::string> files;
    for (const auto& f : d.cfg.files) files.push_back(f.string());
    d.add("config", Status::Ok,
          files.empty() ? std::string("no configuration file: defaults")
                        : fmt::format("{}: no warnings", fmt::join(files, ", ")));
  }
}

// ctxkit's entries (the hooks and status line of settings.json, the MCP servers of the user's
// configuration) should all run the programs of one install: a warning names the folders when
// they do not (an install from one place and a later one from another, left half and half).
void check_one_install(Doctor& d, const std::vector<claude::CommandHook>& hooks,
                       const json& settings, const json& claude_json) {
  std::vector<std::pair<std::string, std::vector<std::string>>> dirs;  // folder, what runs there
  auto note = [&](const std::string& dir, const std::string& what) {
    if (dir.empty()) return;
    auto it = std::find_if(dirs.begin(), dirs.end(), [&](const auto& e) { return e.first == dir; });
    if (it == dirs.end()) {
      dirs.push_back({dir, {what}});
    } else if (std::find(it->second.begin(), it->second.end(), what) == it->second.end()) {
      it->second.push_back(what);
    }
  };
  for (const auto& h : hooks)
    if (!claude::ctxkit_hook_key(h.event, h.command).empty())
      note(claude::command_program_dir(h.command, d.home), "hooks");
  if (settings.is_object() && settings.contains("statusLine") && settings["statusLine"].is_object())
    if (std::string c = settings["statusLine"].value("command", std::string());
        claude::runs_ctx_status(c))
      note(claude::command_program_dir(c, d.home), "status line");
  for (const McpServerKind* kind : {&kWorkflowMcp, &kArchiveMcp})
    for (const auto& s : claude::find_mcp_servers(claude_json, kind->program, d.home))
      if (!s.argv.empty() && !s.argv.front().empty() && s.argv.front().front() == '/')
        note(fs::path(s.argv.front()).parent_path().lexically_normal().string(), "MCP servers");
  if (dirs.size() < 2) return;
  std::vector<std::string> parts;
  for (const auto& [dir, what] : dirs)
    parts.push_back(fmt::format("{} ({})", dir, fmt::join(what, ", ")));
  d.add("install", Status::Warning,
        fmt::format("ctxkit's entries run the programs of more than one install: {}",
                    fmt::join(parts, "; ")),
        d.setup_command() + " (one install takes them all over)");
}

void check_install(Doctor& d) {
  auto settings = read_json_file(d.settings_path);
  if (!settings) {
    d.add("install", Status::Fault, settings.error().message,
          "fix the file (Claude Code ignores it as it is)");
    return;
  }
  auto installed = read_json_file(d.loc.claude_config_dir / "plugins" / "installed_plugins.json");
  const auto settings_hooks = claude::command_hooks(*settings);
  const bool by_settings = claude::runs_ctxkit(settings_hooks, d.home);
  const auto plugins = claude::enabled_ctxkit_plugins(*settings);
  std::string plugin_id, plugin_root;
  for (const auto& id : plugins) {
    auto paths =
        installed ? claude::plugin_install_paths(*installed, id) : std::vector<std::string>{};
    if (paths.empty()) {
      d.add("install", Status::Fault, fmt::format("plugin {} is enabled but not installed", id),
            fmt::format("claude plugin install {}", id));
      continue;
    }
    plugin_id = id;
    plugin_root = paths.front();
  }
  const bool by_plugin = !plugin_root.empty();
  const std::string where = d.settings_path.string();
  // Which command keeps one install when both are registered: this doctor's own (the plugin's
  // part when it runs from the plugin, else the settings install, which disables the plugin).
  std::error_code ec;
  const bool doctor_in_plugin =
      fs::is_regular_file(d.bin_dir.parent_path() / ".claude-plugin" / "plugin.json", ec);
  if (by_settings && by_plugin) {
    d.add("install", Status::Fault,
          fmt::format("ctxkit is registered twice, in {} and as plugin {}: every hook runs twice",
                      where, plugin_id),
          doctor_in_plugin
              ? util::shell_quote((d.bin_dir / "ctx-settings").string()) +
                    " install --status-line-only (keeps the plugin)"
              : d.setup_command() + " (keeps the settings install and disables the plugin)");
  } else if (!by_settings && !by_plugin && plugins.empty()) {
    d.add("install", Status::Fault,
          fmt::format(
              "ctxkit is not registered: no hook in {} runs it and no ctxkit plugin is enabled",
              where),
          d.setup_command() + ", or install the ctxkit plugin");
  } else if (by_settings) {
    d.add("install", Status::Ok, fmt::format("settings.json install ({})", where));
  } else if (by_plugin) {
    d.add("install", Status::Ok, fmt::format("plugin {} ({})", plugin_id, plugin_root));
  }

  if (by_settings || (!by_plugin && plugins.empty()))
    check_hooks(d, settings_hooks, where, "", d.install_command(), d.setup_command());
  if (by_plugin) {
    fs::path hooks_file = fs::path(plugin_root) / "hooks" / "hooks.json";
    auto doc = read_json_file(hooks_file);
    if (!doc)
      d.add("hooks", Status::Fault, doc.error().message,
            fmt::format("claude plugin update {}", plugin_id));
    else
      check_hooks(d, claude::command_hooks(*doc), hooks_file.string(), plugin_root,
                  fmt::format("claude plugin update {}", plugin_id),
                  fmt::format("claude plugin update {}", plugin_id));
  }
  check_status_line(d, *settings);

  // Both MCP servers, each where its install puts it: the user's MCP configuration (install.sh,
  // ctx-settings install) or the plugin's .mcp.json.
  auto claude_json = read_json_file(d.claude_json_path);
  if (!claude_json)
    d.add("mcp", Status::Fault, claude_json.error().message,
          "fix the file (Claude Code ignores it as it is)");
  std::optional<json> plugin_mcp;
  fs::path mcp_file;
  if (by_plugin) {
    mcp_file = fs::path(plugin_root) / ".mcp.json";
    if (auto doc = read_json_file(mcp_file)) plugin_mcp = std::move(*doc);
  }
  for (const McpServerKind* kind : {&kWorkflowMcp, &kArchiveMcp}) {
    if (!claude_json) break;
    std::vector<claude::McpServerFound> servers =
        claude::find_mcp_servers(*claude_json, kind->program, d.home);
    std::string mcp_where = d.claude_json_path.string();
    if (plugin_mcp) {
      auto more = claude::find_mcp_servers(*plugin_mcp, kind->program, d.home, plugin_root);
      servers.insert(servers.end(), more.begin(), more.end());
      mcp_where += " or " + mcp_file.string();
    }
    check_mcp(d, servers, mcp_where, *kind);
  }

  check_one_install(d, settings_hooks, *settings, claude_json ? *claude_json : json());

  std::string status_command;
  if (settings->is_object() && settings->contains("statusLine") &&
      (*settings)["statusLine"].is_object())
    status_command = (*settings)["statusLine"].value("command", std::string());
  auto status_words = claude::command_words(status_command, d.home);
  check_last_runs(d, status_words && !status_words->empty() &&
                         fs::path(status_words->front()).filename() == "ctx-status");
}
}  // namespace

const char* status_word(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Warning:
      return "warning";
    case Status::Fault:
      return "fault";
  }
  return "";
}

namespace {
// Each area's check, in the order of Area (and of the report).
constexpr void (*kChecks[])(Doctor&) = {check_programs,   check_install, check_claude,
                                        check_compaction, check_state,   check_archive,
                                        check_cap,        check_config};
static_assert(std::size(kChecks) == static_cast<size_t>(Area::Config) + 1, "one check per area");
}  // namespace

std::vector<Finding> check(const DoctorInputs& in, std::initializer_list<Area> areas) {
  Doctor d(in);
  for (Area a : areas) kChecks[static_cast<size_t>(a)](d);
  return std::move(d.findings);
}

std::vector<Finding> check_everything(const DoctorInputs& in) {
  Doctor d(in);
  for (auto* run : kChecks) run(d);
  return std::move(d.findings);
}

Verdict verdict(const std::vector<Finding>& findings) {
  Verdict v;
  for (const auto& f : findings) {
    v.faults += f.status == Status::Fault;
    v.warnings += f.status == Status::Warning;
  }
  return v;
}

std::string findings_text(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    const char* tag = f.status == Status::Ok        ? "ok   "
                      : f.status == Status::Warning ? "WARN "
                                                    : "FAULT";
    out += fmt::format("{} {}: {}{}\n", tag, f.area, f.message,
                       f.fix.empty() ? std::string() : " → " + f.fix);
  }
  const Verdict v = verdict(findings);
  out += v.faults == 0 ? fmt::format("healthy ({} warnings)\n", v.warnings)
                       : fmt::format("{} faults, {} warnings\n", v.faults, v.warnings);
  return out;
}

std::string findings_json(const std::vector<Finding>& findings) {
  const Verdict v = verdict(findings);
  json out = {{"healthy", v.faults == 0},
              {"faults", v.faults},
              {"warnings", v.warnings},
              {"findings", json::array()}};
  for (const auto& f : findings) {
    json item = {{"area", f.area}, {"status", status_word(f.status)}, {"message", f.message}};
    if (!f.fix.empty()) item["fix"] = f.fix;
    out["findings"].push_back(std::move(item));
  }
  return util::dump_json(out, 2, util::BadUtf8::replace) + "\n";
}

}  // namespace ctxkit::doctor
