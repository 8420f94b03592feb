#include "apps/remind_app.hpp"

#include <fmt/core.h>

#include "apps/cli.hpp"
#include "apps/client_hints.hpp"
#include "apps/hook_input.hpp"
#include "claude/hook_response.hpp"
#include "context/context_meter.hpp"
#include "context/reminder.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/supervision.hpp"
#include "pins/pin_scope.hpp"
#include "store/state_access.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-remind";

// The single stderr line a hook may print: the first problem noted wins.
struct Note {
  std::string text;
  void add(const std::string& t) {
    if (text.empty() && !t.empty()) text = t;
  }
  void print(AppContext& ctx) const {
    if (!text.empty()) print_note(ctx.err, kTool, text);
  }
};

// The command line, when there is one: the client runs the hook without arguments, and the parser
// is then not built (a few percent of such a run).
std::optional<int> parse_command_line(const std::vector<std::string>& args, AppContext& ctx) {
  if (args.empty()) return std::nullopt;
  ProgramCli cli(
      kTool, "PostToolUse hook: tells the model how full its context is (60/75/85% by default).");
  std::string event;
  cli.add_show_config();
  cli.add_version();
  cli.app().add_option("event", event,
                       "hook event name (informational; the payload's own name is used)");
  return cli.parse(args, ctx);
}
// What the compaction that `[compact] at` asks for keeps: the session's pins (its line of work and
// its project), read only when that reminder goes out.
context::CompactDue compact_due_pins(const core::Config& cfg, const core::Locations& loc,
                                     const claude::HookPayload& payload, Note& note) {
  context::CompactDue due;
  due.at = cfg.compact.at;
  due.rollover = cfg.compact.action == "rollover";
  std::string problem;
  auto store = store::open_state(loc, cfg, problem);
  note.add(problem);
  if (!store) return due;
  auto scope = pins::resolve_pin_scope(*store, payload.session_id, payload.cwd);
  if (!scope) {
    note.add(scope.error().message);
    return due;
  }
  auto listed = pins::list_pins(*store, *scope);
  if (!listed) {
    note.add(listed.error().message);
    return due;
  }
  for (const auto& p : listed->pins) due.pins.push_back(p.text);
  due.pin_total = listed->total;
  return due;
}
}  // namespace

int run_remind(const std::vector<std::string>& args, AppContext& ctx) {
  if (auto rc = parse_command_line(args, ctx)) return *rc;

  auto payload = read_hook_payload(ctx, kTool);
  if (!payload) return exit_code(fail_open_code(kTool));
  Note note;
  if (payload->hook_event_name != "PostToolUse") {
    note.add(fmt::format("note: ignoring a '{}' payload (this hook handles PostToolUse)",
                         payload->hook_event_name.empty() ? "unnamed" : payload->hook_event_name));
    note.print(ctx);
    return exit_code(ExitCode::ok);
  }

  const auto project = core::project_start_dir(ctx.env, payload->cwd);
  core::Config cfg = core::load_config(ctx.env, {project});
  const core::Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);
  if (!cfg.errors.empty())
    note.add("config error: " + cfg.errors.front());
  else if (!cfg.warnings.empty())
    note.add("config warning: " + cfg.warnings.front());

  const bool subagent = !payload->agent_id.empty();
  auto scan =
      context::measure_transcript(payload->context_transcript(), payload->tool_use_id,
                                  std::chrono::milliseconds(cfg.context.transcript_wait_ms),
                                  subagent ? context::Chain::Subagent : context::Chain::Main);

  std::string state_problem;
  Error::Kind state_kind = Error::Kind::Generic;
  std::optional<store::MeterStore> store = store::open_meter(loc, cfg, state_problem, &state_kind);
  note.add(state_problem);
  // Locked (even before its first migration): another hook holds it, so the rate limit is
  // held elsewhere; stay quiet rather than remind without one.
  const bool state_locked = !store && state_kind == Error::Kind::Busy;

  // What the meter holds for this session (or subagent), in one read.
  std::optional<store::MeterRow> kept;
  if (store) {
    if (auto r = store->row(payload->session_id, payload->agent_id))
      kept = *r;
    else
      note.add(r.error().message);
  }
  // The status line's exact figure (main session only) wins when it is newer than the reading.
  std::optional<store::StatusFigure> status;
  if (kept && !subagent) status = kept->status;
  std::optional<int64_t> tokens;
  std::string model, client_version;
  if (scan && scan->reading) {
    tokens = scan->reading->tokens;
    model = scan->reading->model;
    client_version = scan->reading->client_version;
  }
  // A compaction's estimate names no model: the one last seen for the session.
  if (kept && model.empty()) model = kept->model;
  if (kept && client_version.empty()) client_version = kept->client_version;
  if (status && !(scan && scan->found_tool_use && scan->reading)) {
    auto reading_ms =
        scan && scan->reading ? util::parse_iso8601_ms(scan->reading->timestamp) : std::nullopt;
    if (!tokens || (reading_ms && status->recorded_at_ms > *reading_ms)) tokens = status->tokens;
  }
  if (!tokens) {
    if (!scan)
      note.add(fmt::format("no context reading: {}", scan.error().message));
    else
      note.add(fmt::format("no context reading: {} holds no reply with token usage yet",
                           payload->context_transcript().string()));
    note.print(ctx);
    return exit_code(ExitCode::ok);
  }

  // No window holds more than this (a hostile or broken transcript): no reading, no reminder.
  if (*tokens > context::kMaxUsageTokens) {
    note.add(
        fmt::format("no context reading: a context usage of {} tokens in {} cannot be a real "
                    "reading",
                    *tokens, payload->context_transcript().string()));
    note.print(ctx);
    return exit_code(ExitCode::ok);
  }

  context::WindowHints hints;
  hints.model = model;
  hints.client_version = client_version;
  {
    std::string problem;
    hints.compaction = compaction_settings(ctx.env, project, store ? &*store : nullptr, problem);
    note.add(problem);
  }
  if (status) hints.status_line_window = status->window;
  if (store && kept && !subagent && scan && scan->reading && !scan->reading->model.empty() &&
      (kept->model != model || kept->client_version != client_version)) {
    if (auto r = store->record_client(payload->session_id, client_version, model); !r)
      note.add(r.error().message);
  }
  if (store) {
    if (kept) hints.seen_over_200k = kept->large_window;
    if (*tokens > 200'000 && !hints.seen_over_200k && cfg.context.window_tokens == 0) {
      if (auto r = store->mark_large_window(payload->session_id, payload->agent_id); !r)
        note.add(r.error().message);
    }
  }
  context::ContextFigure figure = make_figure(cfg.context, hints, *tokens);
  context::Tier tier = context::tier_for(figure.percent, cfg.context);
  // The user's `[compact] at`, reached in the main session with no supervisor to carry it out (a
  // supervisor compacts; a rollover needs the model's summary, so it is always asked for): the
  // reminder names the command (rate-limited as a tier of at least Warn).
  const bool carried_out =
      cfg.compact.action == "compact" && core::supervisor_of(ctx.env).has_value();
  const bool compact_due =
      cfg.compact.at > 0 && figure.percent >= cfg.compact.at && !subagent && !carried_out;
  if (compact_due && tier < context::Tier::Warn) tier = context::Tier::Warn;
  const int64_t now = util::now_ms();
  const int64_t interval = int64_t{cfg.context.check_interval_seconds} * 1000;

  using context::RateLimitAccess;
  const RateLimitAccess access = state_locked ? RateLimitAccess::Locked
                                 : !store     ? RateLimitAccess::Unavailable
                                 : !kept      ? RateLimitAccess::Unread
                                              : RateLimitAccess::Read;
  std::string update_problem;
  const bool fire = context::reminder_fires(
      access, kept ? kept->reminder : std::nullopt, tier, now, interval,
      [&](const auto& decide) -> Result<void> {
        auto r = store->update_reminder(payload->session_id, payload->agent_id, decide);
        if (!r) return std::unexpected(r.error());
        return {};
      },
      update_problem);
  note.add(update_problem);
  // Closed before the reply is written: the meter database is held while it is open.
  const bool rate_limited = store.has_value();
  store.reset();
  if (fire) {
    std::string text, human;
    if (compact_due) {
      const context::CompactDue due = compact_due_pins(cfg, loc, *payload, note);
      text = context::compact_due_text(figure, due, hints.compaction.window_countdown());
      human = context::compact_due_user_text(figure, due);  // the user is the one to type it
    } else {
      text = context::reminder_text(tier, figure, cfg.context, subagent,
                                    hints.compaction.window_countdown());
      if (cfg.context.system_message) human = "ctxkit: " + text;
    }
    if (!rate_limited && !state_problem.empty())
      human = fmt::format("ctxkit: {} (reminders are not rate-limited)", state_problem);
    ctx.out << claude::post_tool_use_response(text, human) << '\n';
  }
  note.print(ctx);
  return exit_code(ExitCode::ok);
}

}  // namespace ctxkit::apps
