#include "apps/report_app.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "claude/session_locator.hpp"
#include "claude/transcript_head.hpp"
#include "context/compaction_point.hpp"
#include "core/config.hpp"
#include "core/project_folder.hpp"
#include "report/html_page.hpp"
#include "report/session_scan.hpp"
#include "report/state_events.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-report";

// The newest transcript of the project at `project` (by modification time), or an error naming
// the folder looked in.
Result<fs::path> newest_transcript(const core::Locations& loc, const fs::path& project) {
  const fs::path folder = loc.claude_projects_dir() / core::project_folder_name(project.string());
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".jsonl" || !it->is_regular_file(ec)) continue;
    const auto t = it->last_write_time(ec);
    if (ec) continue;
    if (newest.empty() || t > newest_time) {
      newest = it->path();
      newest_time = t;
    }
  }
  if (newest.empty())
    return fail(fmt::format("no session of this project: no transcript in {}", folder.string()),
                Error::Kind::NotFound);
  return newest;
}

// Everything one session of the report needs from its transcript: the scan, its subagents'
// lanes and reminders, the cwd of its head. A transcript that cannot be read gives a part that
// says so.
report::SessionPart read_session(const fs::path& transcript, const std::string& id,
                                 const core::Config& cfg,
                                 const context::CompactionSettings& settings,
                                 std::vector<report::Event>& events) {
  auto scan = report::scan_transcript(transcript, id);
  if (!scan) {
    report::SessionPart part;
    part.session_id = id;
    part.transcript = transcript.string();
    part.missing.push_back(fmt::format("session {}: {}", id, scan.error().message));
    return part;
  }
  if (auto head = claude::read_transcript_head(transcript, {200, 1u << 20}); head)
    scan->cwd = head->cwd;
  for (auto& e : scan->events) events.push_back(std::move(e));
  scan->events.clear();
  report::SessionPart part =
      report::make_session_part(std::move(*scan), transcript, cfg.context, settings);
  for (const auto& sub : report::subagent_transcripts(transcript)) {
    const std::string name = sub.stem().string();
    auto s = report::scan_transcript(sub, id + "/" + name, true);
    if (!s) {
      part.missing.push_back(fmt::format("subagent {}: {}", name, s.error().message));
      continue;
    }
    for (auto& e : s->events) events.push_back(std::move(e));
    if (!s->points.empty()) part.subagents.push_back({name, std::move(s->points)});
  }
  return part;
}

// Writes `page` to `out` ("-": the output stream), or to <state>/reports/<name> when `out` is
// empty, and prints the path. Returns the exit code.
int write_page(const std::string& page, const std::string& out, const std::string& name,
               const core::Locations& loc, AppContext& ctx) {
  const ErrorExit error{kTool, ctx};
  if (out == "-") {
    ctx.out << page;
    return 0;
  }
  fs::path path = out;
  if (path.empty()) {
    const fs::path dir = loc.state_dir / "reports";
    if (auto made = util::make_private_dirs(dir, loc.state_dir); !made)
      return error(made.error().message);
    path = dir / name;
  }
  if (auto w = util::write_file_atomic(path, page, 0600, util::Durability::Flush); !w)
    return error(w.error().message);
  std::error_code ec;
  fs::path shown = fs::absolute(path, ec);
  ctx.out << (ec ? path : shown).string() << '\n';
  return 0;
}

}  // namespace

int run_report(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Writes a page (one HTML file, nothing fetched) of a session's context over "
                 "time: every response's context, the compaction point, reminders, compactions, "
                 "trims, rollovers and workflow actions; prints its path.");
  auto app = cli.app();
  std::string session, output;
  bool lineage = false, json_out = false;
  size_t max_points = 2000;
  app.add_option("session,--session", session,
                 "session id or transcript path (default: $CLAUDE_CODE_SESSION_ID, else the "
                 "newest session of the current project)");
  app.add_flag("--lineage", lineage, "the sessions of the session's line of work, end to end");
  app.add_flag("--json", json_out, "the same data as JSON instead of a page");
  app.add_option("-o,--output", output,
                 "where to write (\"-\": standard output; default: <state>/reports/<session>.html, "
                 "or standard output with --json)");
  app.add_option("--max-points", max_points, "the curve's points at most (every event is kept)")
      .range(size_t{4}, size_t{1'000'000});
  cli.add_version();
  cli.add_show_config();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);

  const fs::path project = core::project_start_dir(ctx.env, "");
  core::Config cfg = core::load_config(ctx.env, {project});
  const core::Locations loc = cfg.locations(ctx.env);
  Result<fs::path> transcript = fail("no session");
  if (!session.empty() || ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID"))
    transcript = claude::locate_session(session, ctx.env, loc);
  else
    transcript = newest_transcript(loc, project);
  if (!transcript) return error(transcript.error().message);
  const std::string id = transcript->stem().string();
  const context::CompactionSettings settings =
      context::client_compaction_settings(ctx.env, project);

  report::Timeline t;
  t.lineage = lineage;
  std::optional<store::StateStore> store;
  std::error_code ec;
  if (fs::exists(loc.state_db(), ec)) {
    auto s = store::StateStore::open(loc.state_db(), cfg.state.busy_timeout_ms);
    if (s)
      store.emplace(std::move(*s));
    else
      t.notes.push_back(
          fmt::format("ctxkit's state database could not be read ({}): trims, "
                      "rollovers and workflow actions are not shown",
                      s.error().message));
  } else {
    t.notes.push_back(
        fmt::format("no ctxkit state database at {}: trims, rollovers and workflow "
                    "actions are not shown",
                    loc.state_db().string()));
  }

  // The sessions: this one, or its line of work from the first ancestor to the newest.
  std::vector<store::SessionRecord> chain;
  std::optional<store::SessionRecord> own;
  if (store) {
    auto r = store->session(id);
    if (!r) return error(r.error().message);
    own = *r;
  }
  if (lineage && own) {
    std::vector<store::SessionRecord> up{*own};
    for (int guard = 0; guard < 10000 && !up.back().parent_id.empty(); ++guard) {
      auto p = store->session(up.back().parent_id);
      if (!p) return error(p.error().message);
      if (!*p) {
        t.notes.push_back(fmt::format("session {} (the parent of {}) is not recorded",
                                      up.back().parent_id, up.back().session_id));
        break;
      }
      up.push_back(**p);
    }
    chain.assign(up.rbegin(), up.rend());
    for (int guard = 0; guard < 10000; ++guard) {
      auto kids = store->children(chain.back().session_id);
      if (!kids) return error(kids.error().message);
      if (kids->empty()) break;
      chain.push_back(kids->back());
    }
  } else if (lineage) {
    t.notes.push_back(
        fmt::format("no line of work recorded for session {}: this session alone", id));
  }

  if (chain.empty()) {
    std::vector<report::Event> events;
    report::SessionPart part = read_session(*transcript, id, cfg, settings, events);
    if (own) part.end_reason = own->end_reason;
    if (store) {
      auto more = report::state_events(*store, part, own, events);
      if (!more) return error(more.error().message);
      for (auto& e : *more) events.push_back(std::move(e));
    }
    for (auto& e : report::cap_events(loc, part, events)) events.push_back(std::move(e));
    t.title = fmt::format("Context of session {}", id);
    t.sessions.push_back(std::move(part));
    t.events = std::move(events);
  } else {
    t.title = fmt::format("Line of work of session {} ({} session{})", id, chain.size(),
                          chain.size() == 1 ? "" : "s");
    for (size_t i = 0; i < chain.size(); ++i) {
      const store::SessionRecord& r = chain[i];
      fs::path path = r.session_id == id ? *transcript : fs::path(r.transcript);
      if (path.empty() || !fs::exists(path, ec)) {
        auto found = claude::locate_session(r.session_id, ctx.env, loc);
        if (found) path = *found;
      }
      std::vector<report::Event> events;
      report::SessionPart part;
      if (!path.empty() && fs::exists(path, ec)) {
        part = read_session(path, r.session_id, cfg, settings, events);
      } else {
        part.session_id = r.session_id;
        part.transcript = r.transcript;
        part.start_ms = util::parse_iso8601_ms(r.started_at).value_or(0);
        part.end_ms = util::parse_iso8601_ms(r.ended_at).value_or(part.start_ms);
        part.missing.push_back(fmt::format("session #{} {}: transcript not found{}", r.number,
                                           r.session_id,
                                           r.transcript.empty() ? "" : " at " + r.transcript));
      }
      part.number = static_cast<int>(r.number);
      part.end_reason = r.end_reason;
      report::StateEventsOptions o;
      o.ended_by = i + 1 == chain.size();
      auto more = report::state_events(*store, part, r, events, o);
      if (!more) return error(more.error().message);
      for (auto& e : *more) events.push_back(std::move(e));
      for (auto& e : report::cap_events(loc, part, events)) events.push_back(std::move(e));
      for (auto& e : events) t.events.push_back(std::move(e));
      t.sessions.push_back(std::move(part));
    }
  }
  report::sort_events(t.events);

  const std::string name =
      fmt::format("{}{}.{}", id, lineage ? "-lineage" : "", json_out ? "json" : "html");
  if (json_out) {
    const std::string text =
        util::dump_json(report::to_json(t, max_points), -1, util::BadUtf8::replace) + "\n";
    return write_page(text, output.empty() ? "-" : output, name, loc, ctx);
  }
  report::PageOptions po;
  po.max_points = max_points;
  po.generator = fmt::format("ctx-report {}", version());
  return write_page(report::render_timeline_page(t, po), output, name, loc, ctx);
}

int write_run_page(const std::vector<nlohmann::ordered_json>& reports, const std::string& out,
                   AppContext& ctx) {
  report::PageOptions po;
  po.generator = fmt::format("ctx-run {}", version());
  const std::string page = report::render_run_page(reports, po);
  if (out.empty() || out == "-") {
    ctx.out << page;
    return 0;
  }
  if (auto w = util::write_file_atomic(out, page, 0644, util::Durability::Flush); !w)
    return ErrorExit{"ctx-run", ctx}(w.error().message);
  std::error_code ec;
  fs::path shown = fs::absolute(out, ec);
  ctx.out << (ec ? fs::path(out) : shown).string() << '\n';
  return 0;
}

}  // namespace ctxkit::apps
