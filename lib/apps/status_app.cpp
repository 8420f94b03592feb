#include "apps/status_app.hpp"

#include <fmt/core.h>

#include <ctime>
#include <future>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "apps/client_hints.hpp"
#include "archive/output_archive.hpp"
#include "context/context_meter.hpp"
#include "context/pins.hpp"
#include "context/reminder.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/status_format.hpp"
#include "store/state_access.hpp"
#include "util/bounded_run.hpp"
#include "util/json_io.hpp"
#include "util/saturate.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"
#include "util/utf8.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-status";
using json = nlohmann::json;

// A count from the status-line input: non-negative, held at INT64_MAX (never an overflow).
int64_t int_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  int64_t v = it->is_number_float()      ? util::sat_from_double(it->get<double>())
              : it->is_number_unsigned() ? util::sat_from_unsigned(it->get<uint64_t>())
                                         : it->get<int64_t>();
  return std::max<int64_t>(v, 0);
}
std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const char* colour_of(context::Tier t) {
  switch (t) {
    case context::Tier::None:
      return "\x1b[32m";
    case context::Tier::Warn:
      return "\x1b[33m";
    case context::Tier::Recommend:
      return "\x1b[38;5;208m";
    case context::Tier::Urgent:
      return "\x1b[1;31m";
  }
  return "";
}

const char* tier_name(context::Tier t) {
  switch (t) {
    case context::Tier::None:
      return "ok";
    case context::Tier::Warn:
      return "warn";
    case context::Tier::Recommend:
      return "recommend";
    case context::Tier::Urgent:
      return "urgent";
  }
  return "";
}

// What the status input says the session has cost so far ("$0.14"), empty when it says nothing.
std::string cost_of(const json& j) {
  auto cost = j.find("cost");
  if (cost == j.end() || !cost->is_object()) return {};
  auto total = cost->find("total_cost_usd");
  if (total == cost->end() || !total->is_number()) return {};
  double usd = total->get<double>();
  if (!(usd >= 0) || usd > 1e9) return {};
  return fmt::format("${:.2f}", usd);
}

// A rate limit of the status input ("rate_limits": {"five_hour": {"used_percentage": 31.2,
// "resets_at": <epoch s>}}): "31%", with its reset as local time "31% ↻14:00" when given.
std::string rate_limit_of(const json& j, const char* which) {
  auto rl = j.find("rate_limits");
  if (rl == j.end() || !rl->is_object()) return {};
  auto w = rl->find(which);
  if (w == rl->end() || !w->is_object()) return {};
  auto used = w->find("used_percentage");
  if (used == w->end() || !used->is_number()) return {};
  const double pct = used->get<double>();
  if (!(pct >= 0) || pct > 1e6) return {};
  std::string out = fmt::format("{:.0f}%", pct);
  if (auto reset = w->find("resets_at"); reset != w->end() && reset->is_number()) {
    const double at = reset->get<double>();
    if (at > 0 && at < 1e11) {
      const auto t = static_cast<time_t>(at);
      std::tm tm{};
      if (::localtime_r(&t, &tm)) out += fmt::format(" ↻{:02}:{:02}", tm.tm_hour, tm.tm_min);
    }
  }
  return out;
}

// The prompt cache (2.1.332's "prompt_cache": {"warm": true, "expires_at": <epoch s>, …}):
// "warm 4m" (minutes left), "cold", or empty when the client does not say.
std::string cache_of(const json& j, int64_t now_s) {
  auto pc = j.find("prompt_cache");
  if (pc == j.end() || !pc->is_object()) return {};
  auto warm = pc->find("warm");
  if (warm == pc->end() || !warm->is_boolean()) return {};
  auto expires = pc->find("expires_at");
  const bool timed = expires != pc->end() && expires->is_number();
  const double left = timed ? expires->get<double>() - static_cast<double>(now_s) : 0;
  if (!warm->get<bool>() || (timed && left <= 0)) return "cold";
  if (timed && left < 1e7) return fmt::format("warm {}m", static_cast<int64_t>(left / 60) + 1);
  return "warm";
}

// The most of the wrapped command's output that is read; more kills it.
constexpr size_t kMaxWrappedOutput = 64 << 10;

// The user's own status line, run with our input. Its output without trailing newlines, or
// nullopt (with `problem` set) when it could not start, failed, timed out or printed nothing.
std::optional<std::string> run_wrapped(const std::string& command, int timeout_ms,
                                       const std::string& input, const util::Env& env,
                                       std::string& problem) {
  util::ProcessSpec spec;
  spec.argv = util::command_argv(command);
  spec.env.emplace(env.vars().begin(), env.vars().end());
  spec.stdin_data = input;
  spec.timeout = std::chrono::milliseconds(timeout_ms);
  auto run = util::run_bounded(spec, kMaxWrappedOutput);
  if (!run) {
    problem = fmt::format("status command: {}", run.error().message);
    return std::nullopt;
  }
  const util::ProcessResult* r = &run->result;
  if (r->timed_out) {
    problem = fmt::format("status command: no answer within {} ms (stopped)", timeout_ms);
    return std::nullopt;
  }
  if (run->overflowed) {
    problem =
        fmt::format("status command: more than {} bytes of output (stopped)", kMaxWrappedOutput);
    return std::nullopt;
  }
  if (r->exit_code != 0) {
    problem = fmt::format("status command: exit {}", r->exit_code);
    return std::nullopt;
  }
  std::string out = std::move(run->result.out);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return std::nullopt;
  return out;
}

// Their first line, the separator and ours, then their other lines.
std::string compose(const std::optional<std::string>& theirs, const std::string& ours) {
  if (!theirs) return ours + "\n";
  size_t eol = theirs->find('\n');
  std::string first = theirs->substr(0, eol);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  std::string out = first.empty() ? ours : first + " │ " + ours;
  out += '\n';
  if (eol != std::string::npos) out += theirs->substr(eol + 1) + "\n";
  return out;
}
// "pins 3/5 kept, 2 restored" for the session's last compaction that had pins, else "".
std::string pins_words(const core::Locations& loc, const core::Config& cfg,
                       const std::string& session, std::string& problem) {
  std::string note;
  auto store = store::open_state(loc, cfg, note);
  if (!store) {
    if (problem.empty()) problem = note;
    return {};
  }
  auto check = store->last_pin_check(session);
  if (!check || !*check) {
    if (!check && problem.empty()) problem = check.error().message;
    return {};
  }
  return context::pins_status_words((*check)->kept, (*check)->total, (*check)->restored);
}

}  // namespace

int run_status(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool, "statusLine command: shows how full the context window is.");
  auto app = cli.app();
  bool no_colour = false;
  std::optional<std::string> wrap;
  cli.add_show_config();
  cli.add_version();
  app.add_flag("--no-color", no_colour, "plain text (also when NO_COLOR is set)");
  app.add_option(
         "--wrap", wrap,
         "also run this status-line command on the same input and show its line beside ours")
      .option_text("CMD");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (ctx.env.get_nonempty("NO_COLOR")) no_colour = true;

  auto input = ctx.read_stdin();
  if (!input) {
    print_error(ctx.err, kTool, input.error().message);
    return exit_code(ExitCode::failure);
  }
  json j = util::parse_json(*input);
  if (j.is_discarded()) j = util::parse_json(util::sanitize_json_text(*input));
  if (j.is_discarded() || !j.is_object()) {
    print_error(ctx.err, kTool, "status-line input is not a JSON object");
    return exit_code(ExitCode::failure);
  }
  std::string session = str_at(j, "session_id");
  std::string transcript = str_at(j, "transcript_path");
  std::string project = str_at(j, "cwd");
  if (auto ws = j.find("workspace");
      ws != j.end() && ws->is_object() && !str_at(*ws, "project_dir").empty())
    project = str_at(*ws, "project_dir");
  const auto start_dir = core::project_start_dir(ctx.env, project);
  core::Config cfg = core::load_config(ctx.env, {start_dir});
  const core::Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);

  // The user's own status line runs while ours is worked out.
  const std::string wrapped = wrap ? *wrap : cfg.status.command;
  std::string wrap_problem;
  std::future<std::optional<std::string>> theirs;
  if (!wrapped.empty()) {
    theirs = std::async(std::launch::async, [&] {
      return run_wrapped(wrapped, cfg.status.timeout_ms, *input, ctx.env, wrap_problem);
    });
  }
  auto finish = [&](const std::string& ours) {
    std::optional<std::string> their_line;
    if (theirs.valid()) their_line = theirs.get();
    if (!wrap_problem.empty()) print_note(ctx.err, kTool, wrap_problem);
    ctx.out << compose(their_line, ours);
    return exit_code(ExitCode::ok);
  };

  context::WindowHints hints;
  if (auto m = j.find("model"); m != j.end() && m->is_object()) hints.model = str_at(*m, "id");
  hints.client_version = str_at(j, "version");
  std::optional<int64_t> tokens;
  if (auto cw = j.find("context_window"); cw != j.end() && cw->is_object()) {
    hints.status_line_window = int_at(*cw, "context_window_size");
    if (auto cu = cw->find("current_usage"); cu != cw->end() && cu->is_object()) {
      tokens = util::sat_add(
          util::sat_add(int_at(*cu, "input_tokens"), int_at(*cu, "cache_creation_input_tokens")),
          int_at(*cu, "cache_read_input_tokens"));
    }
  }
  // No window holds more than this: a larger usage is no reading, and is neither shown nor
  // recorded.
  if (tokens && *tokens > context::kMaxUsageTokens) {
    print_note(
        ctx.err, kTool,
        fmt::format("status-line input: a context usage of {} tokens cannot be a real reading",
                    *tokens));
    return finish("Context –");
  }
  std::string problem;
  std::optional<store::MeterRow> row;  // what the meter holds for the session
  bool have_settings = false;
  if (!session.empty()) {
    // Closed before the transcript is read: the meter database is held while it is open.
    if (std::optional<store::MeterStore> store = store::open_meter(loc, cfg, problem)) {
      if (tokens) {
        if (auto r =
                store->record_status(session, {*tokens, hints.status_line_window, util::now_ms()});
            !r)
          problem = r.error().message;
      }
      if (auto kept = store->row(session, "")) {
        hints.seen_over_200k = kept->large_window;
        row = *kept;
        if ((!hints.model.empty() && kept->model != hints.model) ||
            (!hints.client_version.empty() && kept->client_version != hints.client_version)) {
          if (auto r = store->record_client(session, hints.client_version, hints.model); !r)
            problem = r.error().message;
        }
      }
      std::string hint_problem;
      hints.compaction = compaction_settings(ctx.env, start_dir, &*store, hint_problem);
      have_settings = true;
      if (problem.empty()) problem = hint_problem;
    }
  }
  if (!have_settings) {
    std::string hint_problem;
    hints.compaction = compaction_settings(ctx.env, start_dir, nullptr, hint_problem);
    if (problem.empty()) problem = hint_problem;
  }
  if (!tokens && !transcript.empty()) {
    if (auto scan = context::scan_transcript_tail(transcript, ""); scan && scan->reading) {
      tokens = scan->reading->tokens;
      if (hints.model.empty()) hints.model = scan->reading->model;
      if (hints.client_version.empty()) hints.client_version = scan->reading->client_version;
    }
  }
  // After a compaction: what it kept of the pins (the state database is read only then).
  std::string pins;
  if (row && row->compactions > 0) pins = pins_words(loc, cfg, session, problem);
  if (!problem.empty()) print_note(ctx.err, kTool, problem);
  if (!tokens) return finish("Context –");
  context::ContextFigure f = make_figure(cfg.context, hints, *tokens);
  context::Tier tier = context::tier_for(f.percent, cfg.context);
  if (!cfg.status.format.empty()) {
    if (auto pieces = core::parse_status_format(cfg.status.format)) {
      core::StatusValues v;
      v[static_cast<size_t>(core::StatusField::Percent)] = fmt::format("{}", f.percent);
      v[static_cast<size_t>(core::StatusField::Tokens)] = context::short_tokens(f.tokens);
      v[static_cast<size_t>(core::StatusField::Usable)] = context::short_tokens(f.usable);
      v[static_cast<size_t>(core::StatusField::Window)] = context::short_tokens(f.window);
      v[static_cast<size_t>(core::StatusField::Tier)] = tier_name(tier);
      std::string model;
      if (auto m = j.find("model"); m != j.end() && m->is_object())
        model = str_at(*m, "display_name");
      v[static_cast<size_t>(core::StatusField::Model)] = model.empty() ? hints.model : model;
      v[static_cast<size_t>(core::StatusField::Cost)] = cost_of(j);
      v[static_cast<size_t>(core::StatusField::Compact)] = context::compact_words(f);
      v[static_cast<size_t>(core::StatusField::Limit5h)] = rate_limit_of(j, "five_hour");
      v[static_cast<size_t>(core::StatusField::Limit7d)] = rate_limit_of(j, "seven_day");
      v[static_cast<size_t>(core::StatusField::Cache)] = cache_of(j, util::now_ms() / 1000);
      v[static_cast<size_t>(core::StatusField::Compactions)] =
          fmt::format("{}", row ? row->compactions : 0);
      v[static_cast<size_t>(core::StatusField::Reclaimed)] =
          context::short_tokens(row ? row->reclaimed_tokens : 0);
      // Tokens as characters / 4 (archive::record_capped_tokens).
      v[static_cast<size_t>(core::StatusField::Capped)] =
          context::short_tokens(static_cast<int64_t>(archive::capped_tokens(loc, session)));
      v[static_cast<size_t>(core::StatusField::Pins)] = pins;
      std::string line = core::render_status_format(*pieces, v);
      return finish(no_colour ? line : fmt::format("{}{}\x1b[0m", colour_of(tier), line));
    }
  }
  std::string figure = context::figure_words(f);
  // A cold cache makes the next request pay a full write anyway: trimming or rolling over now
  // costs nothing more.
  if (tier != context::Tier::None && cache_of(j, util::now_ms() / 1000) == "cold")
    figure += " · cache cold: /trim costs nothing extra now";
  if (!pins.empty()) figure += " · " + pins;
  if (no_colour) return finish("Context " + figure);
  const size_t head = figure.find(" · ");
  return finish(fmt::format("{}Context {}\x1b[0m{}", colour_of(tier), figure.substr(0, head),
                            figure.substr(head)));
}

}  // namespace ctxkit::apps
