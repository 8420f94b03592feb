#include "apps/status_app.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "context/context_meter.hpp"
#include "context/reminder.hpp"
#include "apps/cli.hpp"
#include "store/state_access.hpp"
#include "util/saturate.hpp"
#include "util/time.hpp"
#include "util/utf8.hpp"

namespace ctxkit {

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

const char* colour_of(Tier t) {
  switch (t) {
    case Tier::None: return "\x1b[32m";
    case Tier::Warn: return "\x1b[33m";
    case Tier::Recommend: return "\x1b[38;5;208m";
    case Tier::Urgent: return "\x1b[1;31m";
  }
  return "";
}
}  // namespace

int run_status(const std::vector<std::string>& args, AppContext& ctx) {
  CLI::App app{"statusLine command: shows how full the context window is."};
  app.name(kTool);
  bool show = false, show_version = false, no_colour = false;
  app.add_flag("--show-config", show, "print the effective configuration and where each value came from");
  app.add_flag("--version", show_version, "print the version");
  app.add_flag("--no-color", no_colour, "plain text (also when NO_COLOR is set)");
  if (auto rc = parse_cli(app, args, ctx, kTool)) return *rc;
  if (show_version) {
    ctx.out << kTool << ' ' << version() << '\n';
    return exit_code(ExitCode::ok);
  }
  if (show) {
    ctx.out << show_config(load_config(ctx.env, {project_start_dir(ctx.env, "")}));
    return exit_code(ExitCode::ok);
  }
  if (ctx.env.get_nonempty("NO_COLOR")) no_colour = true;

  auto input = ctx.read_stdin();
  if (!input) {
    print_error(ctx.err, kTool, input.error().message);
    return exit_code(ExitCode::failure);
  }
  json j = json::parse(*input, nullptr, false);
  if (j.is_discarded()) j = json::parse(util::sanitize_json_text(*input), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    print_error(ctx.err, kTool, "status-line input is not a JSON object");
    return exit_code(ExitCode::failure);
  }
  std::string session = str_at(j, "session_id");
  std::string transcript = str_at(j, "transcript_path");
  std::string project = str_at(j, "cwd");
  if (auto ws = j.find("workspace"); ws != j.end() && ws->is_object() && !str_at(*ws, "project_dir").empty())
    project = str_at(*ws, "project_dir");
  Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, project)});

  WindowHints hints;
  if (auto m = j.find("model"); m != j.end() && m->is_object()) hints.model = str_at(*m, "id");
  std::optional<int64_t> tokens;
  if (auto cw = j.find("context_window"); cw != j.end() && cw->is_object()) {
    hints.status_line_window = int_at(*cw, "context_window_size");
    if (auto cu = cw->find("current_usage"); cu != cw->end() && cu->is_object()) {
      tokens = util::sat_add(util::sat_add(int_at(*cu, "input_tokens"), int_at(*cu, "cache_creation_input_tokens")),
                             int_at(*cu, "cache_read_input_tokens"));
    }
  }
  std::string problem;
  std::optional<StateStore> store;
  if (!session.empty()) store = open_state(cfg.locations(ctx.env), cfg, problem);
  if (store) {
    if (tokens) {
      if (auto r = store->record_status(session, {*tokens, hints.status_line_window, util::now_ms()}); !r)
        problem = r.error().message;
    }
    if (auto large = store->large_window(session, "")) hints.seen_over_200k = *large;
  }
  if (!tokens && !transcript.empty()) {
    if (auto scan = scan_transcript_tail(transcript, ""); scan && scan->reading) {
      tokens = scan->reading->tokens;
      if (hints.model.empty()) hints.model = scan->reading->model;
    }
  }
  if (!problem.empty()) print_note(ctx.err, kTool, problem);
  if (!tokens) {
    ctx.out << "Context –\n";
    return exit_code(ExitCode::ok);
  }
  ContextFigure f = make_figure(cfg.context, hints, *tokens);
  Tier tier = tier_for(f.percent, cfg.context);
  std::string figure =
      f.basis == Basis::Usable
          ? fmt::format("{} of {} usable · {} window", short_tokens(f.tokens), short_tokens(f.usable),
                        short_tokens(f.window))
          : fmt::format("{} of {} window", short_tokens(f.tokens), short_tokens(f.window));
  if (no_colour) ctx.out << fmt::format("Context {}% · {}\n", f.percent, figure);
  else ctx.out << fmt::format("{}Context {}%\x1b[0m · {}\n", colour_of(tier), f.percent, figure);
  return exit_code(ExitCode::ok);
}

}  // namespace ctxkit
