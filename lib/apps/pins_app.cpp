#include "apps/pins_app.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "claude/hook_response.hpp"
#include "core/hook_stamp.hpp"
#include "core/project_folder.hpp"
#include "pins/compaction_pins.hpp"
#include "pins/pin_scope.hpp"
#include "store/pin_views.hpp"
#include "store/state_access.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
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
    j = util::parse_json_or_throw(util::is_valid_utf8(text) ? text
                                                            : util::sanitize_json_text(text));
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

// The project folder of a hook's session (the session's recorded project wins, see
// pins::resolve_pin_scope): its cwd.
std::string hook_project_dir(const PinPayload& p) {
  return p.cwd;
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
    if (auto text = pins::take_pins_to_restore(loc, p->session_id, note))
      ctx.out << claude::additional_context_response(claude::HookEvent::UserPromptSubmit, *text)
              << '\n';
  } else if (p->event == "PreCompact" || p->event == "PostCompact") {
    // PreCompact reads the session's view of its pins and opens no database when it is current.
    std::optional<store::PinView> view;
    if (p->event == "PreCompact")
      view = store::PinViews(loc.state_db())
                 .read(p->session_id, core::project_folder_name(hook_project_dir(*p)));
    if (view) {
      ctx.out << pins::summarizer_instructions(*view, p->custom_instructions);
    } else if (p->event == "PostCompact" && !p->has_summary) {
      note = "note: the PostCompact payload has no compact_summary: the pins are not checked";
    } else if (auto store = store::open_state(loc, cfg, note)) {
      auto scope = pins::resolve_pin_scope(*store, p->session_id, hook_project_dir(*p));
      if (!scope) {
        note = scope.error().message;
      } else if (p->event == "PreCompact") {
        // Printed from the database, and the view written for the next compaction.
        auto list = pins::list_pins_writing_view(*store, loc, *scope, note);
        if (list)
          ctx.out << pins::summarizer_instructions(pins::pin_view_of(*scope, *list),
                                                   p->custom_instructions);
        else
          note = list.error().message;
      } else {
        if (auto n = pins::check_after_compaction(*store, loc, *scope, p->summary, p->trigger);
            !n.empty())
          note = n;
      }
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

int run_pin(const std::vector<std::string>& args, AppContext& ctx) {
  // As the client runs the hook: no command-line parser built (its subcommands, options and
  // validators are a good part of a hook's own time).
  if (args.size() == 1 && args.front() == "--hook") return run_hook(ctx);
  ProgramCli cli(kTool,
                 "Pins facts that must survive compaction (to this session's line of work, or to "
                 "the project), and with --hook keeps them across compactions (PreCompact, "
                 "PostCompact, UserPromptSubmit).");
  auto app = cli.app();
  bool hook = false;
  std::string session;
  app.add_flag("--hook", hook, "run as the PreCompact/PostCompact/UserPromptSubmit hook");
  app.add_option("--session", session, "the session (default: $CLAUDE_CODE_SESSION_ID)");
  auto add = app.add_subcommand("add", "pin a fact");
  std::vector<std::string> words;
  bool to_project = false;
  add.add_option("text", words,
                 "the fact (the words are joined with spaces; - reads it from stdin)")
      .required();
  add.add_flag("--project", to_project, "pin it to the project instead of the line of work");
  auto list = app.add_subcommand("list", "list the pins of this session and project");
  bool json_out = false;
  list.add_flag("--json", json_out, "print them as JSON");
  auto rm = app.add_subcommand("rm", "remove pins by id");
  std::vector<int64_t> ids;
  rm.add_option("id", ids, "the pins' ids (ctx-pin list)").required();
  cli.add_version();
  cli.add_show_config();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (hook) return run_hook(ctx);
  const auto error = cli.error(ctx);
  if (!add.parsed() && !list.parsed() && !rm.parsed())
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
  auto scope = pins::resolve_pin_scope(*store, session, project_dir);
  if (!scope) return error(scope.error().message);

  if (add.parsed()) {
    std::string text;
    if (words.size() == 1 && words.front() == "-") {
      auto in = ctx.read_stdin();
      if (!in) return error(in.error().message);
      text = std::move(*in);
    } else {
      for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    }
    bool existed = false;
    auto id = pins::add_pin(*store, *scope, text, to_project, &existed);
    if (!id) return error(id.error().message);
    if (auto n = pins::refresh_pin_view(*store, loc, *scope); !n.empty())
      print_note(ctx.err, kTool, n);
    ctx.out << fmt::format("{} pin {} ({})\n", existed ? "already pinned:" : "pinned:", *id,
                           to_project ? "project" : "line of work");
    return 0;
  }
  if (list.parsed()) {
    auto listed = pins::list_pins(*store, *scope);
    if (!listed) return error(listed.error().message);
    if (json_out) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& p : listed->pins)
        arr.push_back({{"id", p.id},
                       {"scope", scope_label(p)},
                       {"text", p.text},
                       {"created_at", util::format_iso8601_ms(p.created_at_ms)}});
      ctx.out << util::dump_json(nlohmann::json{{"pins", arr}, {"total", listed->total}}, -1,
                                 util::BadUtf8::replace)
              << '\n';
      return 0;
    }
    if (listed->pins.empty()) {
      ctx.out << "no pins\n";
      return 0;
    }
    for (const auto& p : listed->pins)
      ctx.out << fmt::format("{:>4} {:<7} {}\n", p.id, scope_label(p), p.text);
    if (listed->total > static_cast<int64_t>(listed->pins.size()))
      ctx.out << fmt::format("({} more not listed)\n",
                             listed->total - static_cast<int64_t>(listed->pins.size()));
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
  if (auto n = pins::refresh_pin_view(*store, loc, *scope); !n.empty())
    print_note(ctx.err, kTool, n);
  return failed;
}

}  // namespace ctxkit::apps
