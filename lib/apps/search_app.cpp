#include "apps/search_app.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "archive/indexer.hpp"
#include "archive/recall.hpp"
#include "claude/message_text.hpp"
#include "claude/session_locator.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/search_index.hpp"
#include "util/line_reader.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

int run_search(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli("ctx-search",
                 "Searches the archived Claude Code sessions (user prompts, assistant text, tool "
                 "inputs and outputs).");
  CLI::App& app = cli.app();
  std::vector<std::string> words;
  std::string project, session, since, show;
  int limit = 20;
  bool json_out = false;
  app.add_option("query", words,
                 "the words to find, taken literally (engine.c:42 and flux-capacitor work)");
  app.add_option("--project", project,
                 "only this project (folder name under ~/.claude/projects, or its path)");
  app.add_option("--session", session, "only this session id");
  app.add_option("--since", since,
                 "only messages at or after this date or time: YYYY-MM-DD[THH:MM[:SS]], UTC unless "
                 "it ends in Z or +HH:MM/-HH:MM");
  app.add_option("--limit", limit, "at most this many hits")->check(CLI::Range(1, 10000));
  app.add_option("--show", show, "print message SESSION:LINE in full");
  app.add_flag("--json", json_out, "print the hits as JSON");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  // The input is checked before the archive is looked at.
  std::string sid;
  int64_t line = 0;
  std::string query;
  if (!show.empty()) {
    auto colon = show.rfind(':');
    if (colon == std::string::npos) return error("--show takes SESSION:LINE");
    sid = show.substr(0, colon);
    try {
      line = std::stoll(show.substr(colon + 1));
    } catch (...) {
      return error("--show takes SESSION:LINE");
    }
    if (line < 1) return error("--show takes SESSION:LINE with a line from 1");
  } else {
    for (const auto& w : words) query += (query.empty() ? "" : " ") + w;
    if (query.find_first_not_of(" \t") == std::string::npos)
      return error("nothing to search for (give some words, or --show SESSION:LINE)");
    if (!since.empty()) {
      auto ms = util::parse_iso8601_ms(since);
      if (!ms)
        return error(fmt::format(
            "--since '{}' is not a date or time (YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])", since));
      since = util::format_iso8601_ms(*ms);  // the index holds the client's UTC form
    }
  }
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  const core::Locations loc = cfg.locations(ctx.env);
  std::error_code ec;
  if (!fs::exists(loc.index_db(), ec) && !fs::exists(loc.archive_dir(), ec)) {
    if (!show.empty()) return error("nothing is archived yet");
    ctx.out << "Nothing is archived yet.\n";
    return 0;
  }
  // Before answering, finish what no indexer finished (a killed or never started one, a
  // quarantined index); when another indexer is at work, say how far it got instead.
  std::string note;
  auto lock = archive::IndexLock::acquire(loc, false);
  if (!lock) return error(lock.error().message);
  auto index = archive::open_index(loc, &note);
  if (!index) return error(index.error().message);
  std::string building;
  const bool indexer_here = lock->has_value();
  if (indexer_here) {
    if (auto before = archive::index_progress(*index, loc, cfg.archive);
        before && before->archived_bytes - before->indexed_bytes > (64u << 20))
      print_note(ctx.err, "ctx-search",
                 fmt::format("indexing {} MB of archived sessions first",
                             (before->archived_bytes - before->indexed_bytes) >> 20));
    auto run = archive::index_pending(*index, loc, cfg.archive);
    if (!run) return error(run.error().message);
    if (!run->first_error.empty() && note.empty()) note = run->first_error;
    lock->reset();
  }
  auto progress = archive::index_progress(*index, loc, cfg.archive);
  if (!progress) return error(progress.error().message);
  if (!progress->complete()) {
    auto size = [](uint64_t b) {
      return b < (10u << 20) ? fmt::format("{} KB", (b + 1023) >> 10)
                             : fmt::format("{} MB", b >> 20);
    };
    building = fmt::format(
        "The search index is {}: {} of {} of archived sessions indexed ({}%, {} of {} sessions "
        "pending); "
        "results come from what is indexed so far.",
        indexer_here ? "incomplete" : "being built", size(progress->indexed_bytes),
        size(progress->archived_bytes),
        progress->archived_bytes ? progress->indexed_bytes * 100 / progress->archived_bytes : 100,
        progress->files_pending, progress->files);
  }
  if (!note.empty()) print_note(ctx.err, "ctx-search", note);
  if (!building.empty() && (json_out || !show.empty())) print_note(ctx.err, "ctx-search", building);

  if (!show.empty()) {
    auto ref = archive::parse_session_ref(sid);
    if (!ref)
      return error(fmt::format(
          "--show takes SESSION:LINE (SESSION/agent-ID:LINE for a subagent's), not {}", show));
    auto file = index->file_of(ref->session_id, ref->agent);
    if (!file) return error(file.error().message);
    if (!*file || archive::project_is_excluded(
                      (ref->agent.empty() ? (*file)->parent_path()
                                          : (*file)->parent_path().parent_path().parent_path())
                          .filename()
                          .string(),
                      cfg.archive))
      return error(fmt::format("session {} is not in the archive", sid));
    auto reader = util::LineReader::open(**file, {}, 4 << 20);
    if (!reader) return error(reader.error().message);
    while (true) {
      auto l = reader->next();
      if (!l) return error(l.error().message);
      if (!*l) break;
      if (static_cast<int64_t>((*l)->number) != line) continue;
      claude::MessageText m = claude::message_text((*l)->text);
      if (json_out) {
        ctx.out << nlohmann::json({{"session_id", sid},
                                   {"line", line},
                                   {"role", m.role},
                                   {"timestamp", m.timestamp},
                                   {"text", m.text}})
                       .dump()
                << '\n';
      } else {
        ctx.out << fmt::format("{}:{}  {}  {}\n\n{}\n", sid, line, m.timestamp,
                               m.role.empty() ? "(no message text)" : m.role, m.text);
      }
      return 0;
    }
    return error(fmt::format("session {} has no line {}", sid, line));
  }

  store::SearchQuery q;
  q.words = query;
  q.project =
      project.find('/') != std::string::npos ? claude::project_folder_name(project) : project;
  q.session = session;
  q.since = since;
  // An index made before a project was excluded still holds it: its hits are dropped here.
  q.limit = cfg.archive.exclude_projects.empty() ? limit : std::min(limit * 4 + 20, 10000);
  auto found = index->search(q);
  if (!found) return error(found.error().message);
  std::erase_if(found->hits, [&](const store::SearchHit& h) {
    return archive::project_is_excluded(h.project, cfg.archive);
  });
  if (found->hits.size() > static_cast<size_t>(limit))
    found->hits.resize(static_cast<size_t>(limit));
  archive::fill_snippets(*found, q.words);
  if (!building.empty() && !json_out) ctx.out << building << '\n';
  const std::vector<store::SearchHit>* hits = &found->hits;
  if (json_out) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& h : *hits)
      arr.push_back({{"session_id", h.session_id},
                     {"agent", store::agent_of_path(h.path)},
                     {"project", h.project},
                     {"line", h.line},
                     {"timestamp", h.timestamp},
                     {"role", h.role},
                     {"snippet", h.snippet},
                     {"rank", h.rank}});
    ctx.out << arr.dump() << '\n';
    return 0;
  }
  if (hits->empty()) {
    ctx.out << "No matches.\n";
    return 0;
  }
  for (const auto& h : *hits) {
    std::string snippet = h.snippet;
    for (auto& c : snippet)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    const std::string agent = store::agent_of_path(h.path);
    ctx.out << fmt::format("{}{}:{}  {}  {}  {}\n    {}\n", h.session_id,
                           agent.empty() ? "" : "/" + agent, h.line, h.timestamp, h.role, h.project,
                           snippet);
  }
  if (found->capped)
    ctx.out << fmt::format(
        "(more than {} messages match; the newest {} were ranked: add words or "
        "--session/--project/--since to narrow)\n",
        store::SearchIndex::kMaxRanked, store::SearchIndex::kMaxRanked);
  ctx.out << fmt::format("{} hit{}; print one in full with: ctx-search --show SESSION:LINE\n",
                         hits->size(), hits->size() == 1 ? "" : "s");
  return 0;
}

}  // namespace ctxkit::apps
