#include "rollover/compact_trigger.hpp"

#include <fmt/core.h>

#include <chrono>
#include <thread>

#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "context/pins.hpp"
#include "core/archive_log.hpp"
#include "core/supervision.hpp"
#include "pins/pin_scope.hpp"
#include "rollover/supervisor.hpp"
#include "store/state_access.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit::rollover {
namespace fs = std::filesystem;

std::string compacted_prompt(int percent, int at) {
  return fmt::format(
      "ctxkit compacted this conversation when its context reached {}% ([compact] at = {}). "
      "Nothing new is asked: answer in one line that you are ready to go on.",
      percent, at);
}

std::string request_compaction_if_due(const core::Config& cfg, const core::Locations& loc,
                                      const util::Env& env, const std::string& session_id,
                                      const std::string& transcript, const std::string& cwd,
                                      std::chrono::milliseconds status_wait) {
  const auto supervisor = core::supervisor_of(env);
  if (!supervisor || cfg.compact.at <= 0 || cfg.compact.action != "compact" || session_id.empty() ||
      transcript.empty())
    return {};
  const auto project = core::project_start_dir(env, cwd);
  // Counted as the reminders count it: with the status line's window and a reading past 200k the
  // meter saw for the session.
  auto seen_hints = [&] {
    context::WindowHints seen;
    std::string ignored;
    if (auto meter = store::open_meter(loc, cfg, ignored))
      if (auto row = meter->row(session_id, ""); row) {
        if (row->status) seen.status_line_window = row->status->window;
        seen.seen_over_200k = row->large_window;
        seen.model = row->model;
        seen.client_version = row->client_version;
      }
    return seen;
  };
  const auto compaction = context::client_compaction_settings(env, project);
  context::WindowHints seen = seen_hints();
  auto percent = context::transcript_percent(transcript, cfg.context, compaction, seen);
  // The status line alone tells the window the client gives the model, and the client runs it
  // 300 ms after the conversation last changed (each change starts that delay again): after a turn
  // whose replies all came faster than that, it has not reported this session's window yet when
  // the turn ends, and the model's default window (1M for one that can have it) would be counted.
  const auto deadline = std::chrono::steady_clock::now() + status_wait;
  while (percent && *percent < cfg.compact.at && seen.status_line_window == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = seen_hints();
    if (seen.status_line_window > 0)
      percent = context::transcript_percent(transcript, cfg.context, compaction, seen);
  }
  if (!percent || *percent < cfg.compact.at) return {};
  std::string note;
  auto store = store::open_state(loc, cfg, note);
  if (!store) return note;
  // A rollover or a workflow action the session prepared goes first.
  auto pending = store->pending_rollover(supervisor->token);
  if (!pending) return pending.error().message;
  if (*pending) return {};
  std::string focus = "Keep the pinned facts word for word.";
  if (auto scope = pins::resolve_pin_scope(*store, session_id, cwd)) {
    if (auto listed = pins::list_pins(*store, *scope); listed && !listed->pins.empty()) {
      std::vector<std::string> texts;
      for (const auto& p : listed->pins) texts.push_back(p.text);
      focus = context::render_pin_list("Keep these pinned facts word for word:", texts,
                                       listed->total, "ctx-pin list");
    }
  }
  const fs::path dir = loc.rollovers_dir();
  if (auto made = util::make_private_dirs(dir, loc.state_dir); !made) return made.error().message;
  const fs::path file = dir / fmt::format("compact-at-{}.md", util::random_uuid());
  if (auto w = util::write_file_atomic(file, compacted_prompt(*percent, cfg.compact.at), 0600,
                                       util::Durability::Flush);
      !w)
    return w.error().message;
  store::PendingRollover p;
  p.supervisor = supervisor->token;
  p.session_id = session_id;
  p.new_session_id = session_id;
  p.prompt_path = file.string();
  p.cwd = cwd;
  p.action = "compact";
  p.focus = focus;
  if (auto r = store->put_pending_rollover(p); !r) return r.error().message;
  return {};
}

void compact_after_turn_if_due(const core::Config& cfg, const core::Locations& loc,
                               const util::Env& env, const std::string& session_id,
                               const std::string& transcript, const std::string& cwd) {
  auto note_problem = [&](const std::string& what) {
    if (!what.empty()) core::append_archive_log(loc, "compact at: " + what);
  };
  // The client writes the turn's last reply after the Stop hook has started.
  std::error_code ec;
  auto size = fs::file_size(transcript, ec);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  auto stable_since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline &&
         std::chrono::steady_clock::now() - stable_since < std::chrono::milliseconds(200)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    const auto now_size = fs::file_size(transcript, ec);
    if (now_size != size) {
      size = now_size;
      stable_since = std::chrono::steady_clock::now();
    }
  }
  const auto supervisor = core::supervisor_of(env);
  if (!supervisor) return;
  if (auto why = request_compaction_if_due(cfg, loc, env, session_id, transcript, cwd,
                                           std::chrono::seconds(2));
      !why.empty()) {
    note_problem(why);
    return;
  }
  std::string problem;
  auto store = store::open_state(loc, cfg, problem);
  if (!store) return note_problem(problem);
  auto woke = wake_when_ready(*store, loc, supervisor->pid_text, supervisor->token, session_id);
  if (!woke) return note_problem(woke.error().message);
  if (*woke) note_problem("not waking the supervisor: " + **woke);
}

}  // namespace ctxkit::rollover
