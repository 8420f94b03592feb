#include "apps/pins_app.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "claude/hook_response.hpp"
#include "context/pins.hpp"
#include "core/hook_stamp.hpp"
#include "core/project_folder.hpp"
#include "store/pin_views.hpp"
#include "store/state_access.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/time.hpp"
#include "util/utf8.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-pin";
// The largest hook payload read (a PostCompact payload carries the whole summary).
constexpr size_t kMaxPayloadBytes = 32u << 20;
constexpr size_t kMaxPayloadDepth = 512;

// The fields of a compaction hook's payload that pins need.
struct PinPayload {
  std::string session_id, transcript_path, cwd, event, trigger, summary, source;
  std::string custom_instructions;  // PreCompact: what `/compact <focus>` was given
  bool has_summary = false;
};

std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<PinPayload> parse_payload(const std::string& text) {
  if (text.size() > kMaxPayloadBytes)
    return fail(fmt::format("hook payload of {} bytes is over the {} MiB this hook reads",
                            text.size(), kMaxPayloadBytes >> 20));
  if (util::json_depth(text, kMaxPayloadDepth) > kMaxPayloadDepth)
    return fail("hook payload nests deeper than this hook reads");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(util::is_valid_utf8(text) ? text : util::sanitize_json_text(text));
  } catch (const std::exception& e) {
    return fail(fmt::format("hook payload is not JSON: {}", e.what()));
  }
  if (!j.is_object()) return fail("hook payload is not a JSON object");
  PinPayload p;
  p.session_id = str_field(j, "session_id");
  p.transcript_path = str_field(j, "transcript_path");
  p.cwd = str_field(j, "cwd");
  p.event = str_field(j, "hook_event_name");
  p.trigger = str_field(j, "trigger");
  p.source = str_field(j, "source");
  p.custom_instructions = str_field(j, "custom_instructions");
  if (auto it = j.find("compact_summary"); it != j.end() && it->is_string()) {
    p.summary = it->get<std::string>();
    p.has_summary = true;
  }
  return p;
}

// A session id usable in a file name (the client's are UUIDs).
bool plain_id(const std::string& id) {
  return store::PinViews::usable_id(id);
}

// The file whose presence tells the next UserPromptSubmit hook that a compaction left pins out:
// that hook then opens the database, and on every other prompt only looks for this file.
fs::path restore_marker(const core::Locations& loc, const std::string& session_id) {
  return loc.state_dir / "pins" / (session_id + ".restore");
}

// The project folder of a hook's session (the session's recorded project wins, see
// resolve_pin_scope): its cwd.
std::string hook_project_dir(const PinPayload& p) {
  return p.cwd;
}

// PreCompact: the pins as instructions for the summarizer (plain stdout, exit 0: the client puts
// it under "Additional Instructions:"), but for those `/compact <focus>` already names (the
// supervisor's focus is the pins).
void print_precompact(const store::PinView& pins, const PinPayload& p, AppContext& ctx) {
  std::vector<std::string> texts;
  for (const auto& pin : pins.texts)
    if (p.custom_instructions.find(pin) == std::string::npos) texts.push_back(pin);
  const auto named = static_cast<int64_t>(pins.texts.size() - texts.size());
  const std::string text = context::precompact_instructions(texts, pins.total - named, "");
  if (!text.empty()) ctx.out << text;
}

// PreCompact from the database (no current view of the session's pins): printed, and the view
// written for the next compaction.
void precompact(store::StateStore& store, const PinScope& scope, const PinPayload& p,
                const core::Locations& loc, AppContext& ctx, std::string& note) {
  auto list = list_pins_writing_view(store, loc, scope, note);
  if (!list) {
    note = list.error().message;
    return;
  }
  print_precompact(pin_view_of(scope, *list), p, ctx);
}

// PostCompact: each pin checked against the summary; the check recorded; when some were missing,
// the text that re-states them left for the next prompt (the marker file), and counted as
// restored with it.
void postcompact(store::StateStore& store, const PinScope& scope, const PinPayload& p,
                 const core::Locations& loc, std::string& note) {
  auto list = list_pins_writing_view(store, loc, scope, note);
  if (!list) {
    note = list.error().message;
    return;
  }
  if (list->pins.empty()) return;
  const context::SummaryText summary(p.summary);
  nlohmann::json detail = nlohmann::json::array();
  std::vector<std::string> missing;
  for (const auto& pin : list->pins) {
    const bool k = summary.keeps(pin.text);
    if (!k) missing.push_back(pin.text);
    detail.push_back({{"id", pin.id}, {"text", pin.text}, {"kept", k}});
  }
  size_t shown = 0;
  const std::string text =
      missing.empty() ? std::string()
                      : context::render_pin_list(
                            "Pinned facts the last compaction's summary left out (re-stated by "
                            "ctxkit; they still hold):",
                            missing, static_cast<int64_t>(missing.size()),
                            "ctx-pin list shows every pin", &shown);
  const bool restoring = shown > 0 && plain_id(scope.session_id);
  store::PinCheckRow row;
  row.session_id = scope.session_id;
  row.line_id = scope.line_id;
  row.at_ms = util::now_ms();
  row.trigger = p.trigger.empty() ? std::string("unknown") : p.trigger;
  row.total = static_cast<int64_t>(list->pins.size());
  row.kept = row.total - static_cast<int64_t>(missing.size());
  row.restored = restoring ? static_cast<int64_t>(shown) : 0;
  row.detail = detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto id = store.add_pin_check(row);
  if (!id) {
    note = id.error().message;
    return;
  }
  if (!restoring) return;
  const fs::path marker = restore_marker(loc, scope.session_id);
  if (auto d = util::make_private_dirs(marker.parent_path(), loc.state_dir); !d) {
    note = d.error().message;
    return;
  }
  // Written whole under another name and renamed: the next prompt's hook takes it whole or not.
  if (auto w = util::write_file_atomic(marker, fmt::format("{}\n{}", *id, text), 0600,
                                       util::Durability::Flush);
      !w)
    note = w.error().message;
}

// UserPromptSubmit: after a compaction that left pins out, those pins as additionalContext, once.
// No database: the marker PostCompact left holds the text, and renaming it away is what makes
// this the one prompt that restores them (another prompt's hook finds no marker). Every other
// prompt costs one failed rename.
void restore(const PinPayload& p, const core::Locations& loc, AppContext& ctx, std::string& note) {
  if (!plain_id(p.session_id)) return;
  const fs::path marker = restore_marker(loc, p.session_id);
  const fs::path taken = loc.state_dir / "pins" / (p.session_id + ".restored");
  if (::rename(marker.c_str(), taken.c_str()) != 0) return;  // the usual case: nothing to restore
  util::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.follow_links = false;
  auto text = util::read_file(taken, limits);
  if (!text) {
    note = text.error().message;
    return;
  }
  const size_t nl = text->find('\n');
  if (nl == std::string::npos || nl + 1 >= text->size()) return;
  ctx.out << claude::additional_context_response(claude::HookEvent::UserPromptSubmit,
                                                 text->substr(nl + 1))
          << '\n';
}

int run_hook(AppContext& ctx) {
  auto input = ctx.read_stdin();
  if (!input) {
    print_error(ctx.err, kTool, input.error().message);
    return exit_code(fail_open_code(kTool));
  }
  auto p = parse_payload(*input);
  if (!p) {
    print_error(ctx.err, kTool, p.error().message);
    return exit_code(fail_open_code(kTool));
  }
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, p->cwd)});
  const core::Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);
  std::string note;
  if (p->event == "UserPromptSubmit") {
    restore(*p, loc, ctx, note);
  } else if (p->event == "PreCompact" || p->event == "PostCompact") {
    std::optional<store::PinView> view;
    if (p->event == "PreCompact")
      view = store::PinViews(loc.state_db())
                 .read(p->session_id, core::project_folder_name(hook_project_dir(*p)));
    if (view) {
      print_precompact(*view, *p, ctx);
    } else if (p->event == "PostCompact" && !p->has_summary) {
      note = "note: the PostCompact payload has no compact_summary: the pins are not checked";
    } else if (auto store = store::open_state(loc, cfg, note)) {
      auto scope = resolve_pin_scope(*store, p->session_id, hook_project_dir(*p));
      if (!scope)
        note = scope.error().message;
      else if (p->event == "PreCompact")
        precompact(*store, *scope, *p, loc, ctx, note);
      else
        postcompact(*store, *scope, *p, loc, note);
    }
  } else {
    note = fmt::format(
        "note: ignoring a '{}' payload (this hook handles PreCompact, PostCompact and "
        "UserPromptSubmit)",
        p->event.empty() ? "unnamed" : p->event);
  }
  if (!note.empty()) print_note(ctx.err, kTool, note);
  return 0;
}

std::string scope_label(const store::PinRow& r) {
  return r.scope_kind == "project" ? "project" : "line";
}

}  // namespace

Result<PinScope> resolve_pin_scope(store::StateStore& store, const std::string& session_id,
                                   const std::string& project_dir) {
  PinScope s;
  s.session_id = session_id;
  if (!session_id.empty()) {
    auto rec = store.session(session_id);
    if (!rec) return std::unexpected(rec.error());
    if (*rec) {
      s.line_id = (*rec)->line_id.empty() ? session_id : (*rec)->line_id;
      s.project = (*rec)->project;
      s.recorded = true;
    } else {
      s.line_id = session_id;
    }
  }
  if (s.project.empty() && !project_dir.empty()) s.project = core::project_folder_name(project_dir);
  return s;
}

Result<int64_t> add_pin(store::StateStore& store, const PinScope& scope, const std::string& text,
                        bool project, bool* existed) {
  auto normal = context::normalize_pin(text);
  if (!normal) return std::unexpected(normal.error());
  store::PinRow row;
  row.scope_kind = project ? "project" : "line";
  row.scope = project ? scope.project : scope.line_id;
  if (row.scope.empty())
    return fail(project ? "no project: run it in the project's folder"
                        : "no session: run it inside a Claude Code session, give --session, or "
                          "pin to the project with --project",
                Error::Kind::Invalid);
  row.text = *normal;
  row.created_at_ms = util::now_ms();
  row.session_id = scope.session_id;
  return store.add_pin(row, context::kMaxPinsPerScope, existed);
}

Result<PinList> list_pins(store::StateStore& store, const PinScope& scope) {
  PinList out;
  auto rows = store.pins(scope.line_id, scope.project, context::kMaxInjectedPins);
  if (!rows) return std::unexpected(rows.error());
  out.pins = std::move(*rows);
  auto n = store.count_pins(scope.line_id, scope.project);
  if (!n) return std::unexpected(n.error());
  out.total = *n;
  return out;
}

store::PinView pin_view_of(const PinScope& scope, const PinList& list) {
  store::PinView v;
  v.recorded = scope.recorded;
  v.project = scope.recorded ? std::string() : scope.project;
  v.total = list.total;
  v.texts.reserve(list.pins.size());
  for (const auto& pin : list.pins) v.texts.push_back(pin.text);
  return v;
}

Result<PinList> list_pins_writing_view(store::StateStore& store, const core::Locations& loc,
                                       const PinScope& scope, std::string& note) {
  std::optional<PinList> list;
  auto r =
      store::PinViews(loc.state_db()).refresh(scope.session_id, [&]() -> Result<store::PinView> {
        auto read = list_pins(store, scope);
        if (!read) return std::unexpected(read.error());
        list = std::move(*read);
        return pin_view_of(scope, *list);
      });
  if (!r) note = r.error().message;
  if (list) return std::move(*list);
  return list_pins(store, scope);  // the lock held elsewhere: read without writing the view
}

std::string refresh_pin_view(store::StateStore& store, const core::Locations& loc,
                             const PinScope& scope) {
  if (!store::PinViews::usable_id(scope.session_id)) return {};
  std::string note;
  if (auto list = list_pins_writing_view(store, loc, scope, note); !list)
    return list.error().message;
  return note;
}

int run_pin(const std::vector<std::string>& args, AppContext& ctx) {
  // As the client runs the hook: no command-line parser built (its subcommands, options and
  // validators are a good part of a hook's own time).
  if (args.size() == 1 && args.front() == "--hook") return run_hook(ctx);
  ProgramCli cli(kTool,
                 "Pins facts that must survive compaction (to this session's line of work, or to "
                 "the project), and with --hook keeps them across compactions (PreCompact, "
                 "PostCompact, UserPromptSubmit).");
  CLI::App& app = cli.app();
  bool hook = false;
  std::string session;
  app.add_flag("--hook", hook, "run as the PreCompact/PostCompact/UserPromptSubmit hook");
  app.add_option("--session", session, "the session (default: $CLAUDE_CODE_SESSION_ID)");
  auto* add = app.add_subcommand("add", "pin a fact");
  std::vector<std::string> words;
  bool to_project = false;
  add->add_option("text", words,
                  "the fact (the words are joined with spaces; - reads it from stdin)")
      ->required();
  add->add_flag("--project", to_project, "pin it to the project instead of the line of work");
  auto* list = app.add_subcommand("list", "list the pins of this session and project");
  bool json_out = false;
  list->add_flag("--json", json_out, "print them as JSON");
  auto* rm = app.add_subcommand("rm", "remove pins by id");
  std::vector<int64_t> ids;
  rm->add_option("id", ids, "the pins' ids (ctx-pin list)")->required();
  cli.add_version();
  cli.add_show_config();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (hook) return run_hook(ctx);
  const auto error = cli.error(ctx);
  if (!add->parsed() && !list->parsed() && !rm->parsed())
    return error("give a command: add, list or rm (--help)");
  if (session.empty()) session = ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or("");
  std::string project_dir = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or("");
  if (project_dir.empty()) {
    std::error_code ec;
    project_dir = fs::current_path(ec).string();
  }
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, project_dir)});
  std::string problem;
  const core::Locations loc = cfg.locations(ctx.env);
  auto store = store::open_state(loc, cfg, problem);
  if (!store) return error(problem);
  if (!problem.empty()) print_note(ctx.err, kTool, problem);
  auto scope = resolve_pin_scope(*store, session, project_dir);
  if (!scope) return error(scope.error().message);

  if (add->parsed()) {
    std::string text;
    if (words.size() == 1 && words.front() == "-") {
      auto in = ctx.read_stdin();
      if (!in) return error(in.error().message);
      text = std::move(*in);
    } else {
      for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    }
    bool existed = false;
    auto id = add_pin(*store, *scope, text, to_project, &existed);
    if (!id) return error(id.error().message);
    if (auto n = refresh_pin_view(*store, loc, *scope); !n.empty()) print_note(ctx.err, kTool, n);
    ctx.out << fmt::format("{} pin {} ({})\n", existed ? "already pinned:" : "pinned:", *id,
                           to_project ? "project" : "line of work");
    return 0;
  }
  if (list->parsed()) {
    auto pins = list_pins(*store, *scope);
    if (!pins) return error(pins.error().message);
    if (json_out) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& p : pins->pins)
        arr.push_back({{"id", p.id},
                       {"scope", scope_label(p)},
                       {"text", p.text},
                       {"created_at", util::format_iso8601_ms(p.created_at_ms)}});
      ctx.out << nlohmann::json{{"pins", arr}, {"total", pins->total}}.dump(
                     -1, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
      return 0;
    }
    if (pins->pins.empty()) {
      ctx.out << "no pins\n";
      return 0;
    }
    for (const auto& p : pins->pins)
      ctx.out << fmt::format("{:>4} {:<7} {}\n", p.id, scope_label(p), p.text);
    if (pins->total > static_cast<int64_t>(pins->pins.size()))
      ctx.out << fmt::format("({} more not listed)\n",
                             pins->total - static_cast<int64_t>(pins->pins.size()));
    return 0;
  }
  int failed = 0;
  for (int64_t id : ids) {
    auto r = store->remove_pin(id, scope->line_id, scope->project);
    if (!r) return error(r.error().message);
    if (!*r) {
      print_error(ctx.err, kTool, fmt::format("no pin {} in this line of work or project", id));
      failed = 1;
      continue;
    }
    ctx.out << fmt::format("removed pin {}\n", id);
  }
  if (auto n = refresh_pin_view(*store, loc, *scope); !n.empty()) print_note(ctx.err, kTool, n);
  return failed;
}

}  // namespace ctxkit::apps
