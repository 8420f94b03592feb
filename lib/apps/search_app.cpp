#include "apps/search_app.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/cli.hpp"
#include "archive/recall.hpp"
#include "archive/session_archiver.hpp"
#include "core/config.hpp"
#include "rollover/rollover.hpp"
#include "util/json_io.hpp"
#include "util/process.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {

namespace {
// ctx-search --show HANDLE [--lines A:B | --bytes A:B] [WORDS]: a capped output, or the lines of it
// that hold the words.
int show_output(AppContext& ctx, const std::string& handle, const std::vector<std::string>& words,
                const std::string& lines, const std::string& bytes) {
  auto error = [&ctx](const std::string& what) {
    print_error(ctx.err, "ctx-search", what);
    return exit_code(ExitCode::failure);
  };
  if (!lines.empty() && !bytes.empty()) return error("give --lines or --bytes, not both");
  archive::OutputRange range;
  if (!lines.empty() || !bytes.empty()) {
    auto parsed = archive::parse_output_range(bytes.empty() ? lines : bytes, !bytes.empty());
    if (!parsed) return error(parsed.error().message);
    range = *parsed;
  }
  std::string search;
  for (const auto& w : words) search += (search.empty() ? "" : " ") + w;
  const core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  archive::ArchiveRecall recall(cfg.locations(ctx.env), cfg.archive);
  // The whole range asked for: a shell has no context to keep small.
  auto slice = recall.show_output(handle, range, search, SIZE_MAX);
  if (!slice && slice.error().kind == Error::Kind::NotFound)
    return error(slice.error().message +
                 " (--show takes SESSION:LINE, or the HANDLE a capped output names)");
  if (!slice) return error(slice.error().message);
  if (!search.empty()) {
    for (const auto& m : slice->matches) ctx.out << fmt::format("{}: {}\n", m.line, m.text);
    if (slice->more_matches)
      ctx.out << fmt::format("(more than {} lines match: give --lines A:B to narrow)\n",
                             archive::kMaxOutputMatches);
    if (slice->matches.empty()) ctx.out << "No matches.\n";
    return 0;
  }
  ctx.out << slice->text;
  return 0;
}
}  // namespace

int run_search(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli("ctx-search",
                 "Searches the archived Claude Code sessions (user prompts, assistant text, tool "
                 "inputs and outputs).");
  auto app = cli.app();
  std::vector<std::string> words;
  std::string project, session, since, show, lines, bytes;
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
  app.add_option("--limit", limit, "at most this many hits").range(1, 10000);
  app.add_option("--show", show,
                 "print message SESSION:LINE in full, or a capped tool output by its HANDLE (the "
                 "words, if any, then search inside it)");
  app.add_option("--lines", lines,
                 "with --show HANDLE: the lines A:B of the output (A: to the end)");
  app.add_option("--bytes", bytes, "with --show HANDLE: the bytes A:B of the output (B excluded)");
  app.add_flag("--json", json_out, "print the hits as JSON");
  std::string archive_path;
  bool ended = false;
  app.add_option("--archive", archive_path,
                 "archive and index this session's transcript now (what ctx-session-hook has done "
                 "after each turn)");
  app.add_flag("--ended", ended,
               "with --archive: the session has ended (waits for an indexer at work; runs "
               "`episodic-memory sync` when [archive] episodic_memory_sync is set)");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  if (ended && archive_path.empty()) return error("--ended goes with --archive TRANSCRIPT");
  if (!archive_path.empty()) {
    if (!words.empty() || !show.empty() || json_out)
      return error("--archive takes no words, --show or --json");
    const core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
    const std::string problem =
        archive::archive_and_index(archive_path, cfg.locations(ctx.env), cfg.archive, !ended);
    if (ended && cfg.archive.episodic_memory_sync) {
      if (auto prog = rollover::find_program("episodic-memory", ctx.env)) {
        util::ProcessSpec spec;
        spec.argv = {*prog, "sync"};
        spec.timeout = std::chrono::minutes(10);
        (void)util::run_process(spec);
      }
    }
    if (!problem.empty()) return error(problem);
    return 0;
  }
  // The input is checked before the archive is looked at.
  std::optional<archive::SessionRef> ref;
  int64_t line = 0;
  std::string query;
  if ((!lines.empty() || !bytes.empty()) && (show.empty() || show.find(':') != std::string::npos))
    return error("--lines and --bytes go with --show HANDLE");
  if (!show.empty() && show.find(':') == std::string::npos)
    return show_output(ctx, show, words, lines, bytes);
  if (!show.empty()) {
    auto colon = show.rfind(':');
    if (colon == std::string::npos) return error("--show takes SESSION:LINE");
    try {
      line = std::stoll(show.substr(colon + 1));
    } catch (...) {
      return error("--show takes SESSION:LINE");
    }
    if (line < 1) return error("--show takes SESSION:LINE with a line from 1");
    ref = archive::parse_session_ref(show.substr(0, colon));
    if (!ref)
      return error(fmt::format(
          "--show takes SESSION:LINE (SESSION/agent-ID:LINE for a subagent's), not {}", show));
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
  const core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  // Before answering, the use case finishes what no indexer finished (a killed or never started
  // one, a quarantined index); when another indexer is at work, it says how far that one got.
  archive::ArchiveRecall recall(
      cfg.locations(ctx.env), cfg.archive, [&ctx](const archive::IndexProgress& before) {
        if (before.archived_bytes - before.indexed_bytes > (64u << 20))
          print_note(ctx.err, "ctx-search",
                     fmt::format("indexing {} MB of archived sessions first",
                                 (before.archived_bytes - before.indexed_bytes) >> 20));
      });
  // The notes on the index: on stderr, the one saying it is incomplete on stdout before the hits
  // of a search printed as text.
  auto building = [](const archive::IndexStatus& status) -> std::string {
    const archive::IndexProgress& p = status.progress;
    if (p.complete()) return {};
    auto size = [](uint64_t b) {
      return b < (10u << 20) ? fmt::format("{} KB", (b + 1023) >> 10)
                             : fmt::format("{} MB", b >> 20);
    };
    return fmt::format(
        "The search index is {}: {} of {} of archived sessions indexed ({}%, {} of {} sessions "
        "pending); results come from what is indexed so far.",
        status.caught_up ? "incomplete" : "being built", size(p.indexed_bytes),
        size(p.archived_bytes), p.archived_bytes ? p.indexed_bytes * 100 / p.archived_bytes : 100,
        p.files_pending, p.files);
  };
  auto notes = [&](bool building_on_stderr) {
    const archive::IndexStatus& status = recall.index_status();
    if (!status.archived) return;
    if (!status.note.empty()) print_note(ctx.err, "ctx-search", status.note);
    if (auto b = building(status); !b.empty() && building_on_stderr)
      print_note(ctx.err, "ctx-search", b);
  };

  if (ref) {
    // The message in full: no cut.
    auto shown = recall.show(*ref, line, 0, 0, SIZE_MAX, SIZE_MAX);
    notes(true);
    if (!shown) return error(shown.error().message);
    const std::string sid = show.substr(0, show.rfind(':'));
    for (const auto& m : shown->messages) {
      if (m.line != line) continue;
      if (json_out) {
        ctx.out << util::dump_json(nlohmann::json({{"session_id", sid},
                                                   {"line", line},
                                                   {"role", m.role},
                                                   {"timestamp", m.timestamp},
                                                   {"text", m.text}}))
                << '\n';
      } else {
        ctx.out << fmt::format("{}:{}  {}  {}\n\n{}\n", sid, line, m.timestamp,
                               m.role.empty() ? "(no message text)" : m.role, m.text);
      }
    }
    return 0;
  }

  store::SearchQuery q;
  q.words = query;
  q.project = project;
  q.session = session;
  q.since = since;
  q.limit = limit;
  auto found = recall.search(q, false);
  if (found && !recall.index_status().archived) {
    ctx.out << "Nothing is archived yet.\n";
    return 0;
  }
  notes(json_out);
  if (!found) return error(found.error().message);
  if (const std::string b = building(recall.index_status()); !b.empty() && !json_out)
    ctx.out << b << '\n';
  const std::vector<archive::RecallHit>& hits = found->hits;
  if (json_out) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& h : hits)
      arr.push_back({{"session_id", h.session_id},
                     {"agent", h.agent},
                     {"project", h.project},
                     {"line", h.line},
                     {"timestamp", h.timestamp},
                     {"role", h.kind},
                     {"snippet", h.snippet},
                     {"rank", h.rank}});
    ctx.out << util::dump_json(arr) << '\n';
    return 0;
  }
  if (hits.empty()) {
    ctx.out << "No matches.\n";
    return 0;
  }
  for (const auto& h : hits) {
    std::string snippet = h.snippet;
    for (auto& c : snippet)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    ctx.out << fmt::format("{}  {}  {}  {}\n    {}\n", h.cite, h.timestamp, h.kind, h.project,
                           snippet);
  }
  if (found->capped)
    ctx.out << fmt::format(
        "(more than {} messages match; the newest {} were ranked: add words or "
        "--session/--project/--since to narrow)\n",
        store::SearchIndex::kMaxRanked, store::SearchIndex::kMaxRanked);
  ctx.out << fmt::format("{} hit{}; print one in full with: ctx-search --show SESSION:LINE\n",
                         hits.size(), hits.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace ctxkit::apps
