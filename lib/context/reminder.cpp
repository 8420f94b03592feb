#include "context/reminder.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "context/pins.hpp"

namespace ctxkit::context {

namespace {
// "Context at 72% (168k of 233k tokens)", the reminders' opening, or the countdown's wording.
std::string figure_head(const ContextFigure& f, bool window_countdown) {
  if (window_countdown)
    return "Context is filling (the tokens-left count after each tool result is this window's)";
  if (f.basis == core::Basis::Usable && f.usable < f.window)
    return fmt::format("Context at {}% ({} of {} usable tokens)", f.percent, short_tokens(f.tokens),
                       short_tokens(f.usable));
  return fmt::format("Context at {}% ({} of {} tokens)", f.percent, short_tokens(f.tokens),
                     short_tokens(f.window));
}
}  // namespace

Tier tier_for(int percent, const core::ContextConfig& c) {
  if (percent >= c.urgent_threshold) return Tier::Urgent;
  if (percent >= c.recommend_threshold) return Tier::Recommend;
  if (percent >= c.warn_threshold) return Tier::Warn;
  return Tier::None;
}

ReminderDecision decide_reminder(const std::optional<core::ReminderState>& prev, Tier tier,
                                 int64_t now_ms, int64_t interval_ms) {
  int t = static_cast<int>(tier);
  ReminderDecision d;
  if (tier == Tier::None) {
    if (prev && prev->tier > 0) d.store = core::ReminderState{0, prev->fired_at_ms};
    return d;
  }
  bool fire = !prev || prev->tier != t || now_ms - prev->fired_at_ms >= interval_ms;
  if (fire) {
    d.fire = true;
    d.store = core::ReminderState{t, now_ms};
  }
  return d;
}

bool reminder_fires(RateLimitAccess access, const std::optional<core::ReminderState>& read,
                    Tier tier, int64_t now_ms, int64_t interval_ms, const ReminderUpdate& update,
                    std::string& problem) {
  switch (access) {
    case RateLimitAccess::Locked:
      return false;
    case RateLimitAccess::Unavailable:
    case RateLimitAccess::Unread:
      return tier != Tier::None;  // without the state there is no rate limit; a note says why
    case RateLimitAccess::Read:
      break;
  }
  if (!decide_reminder(read, tier, now_ms, interval_ms).store) return false;
  bool fire = false;
  auto r = update([&](const std::optional<core::ReminderState>& current) {
    const ReminderDecision d = decide_reminder(current, tier, now_ms, interval_ms);
    fire = d.fire;
    return d.store;
  });
  if (!r) {
    problem = r.error().message;
    // Locked: another hook holds the lock (it is reminding), so stay quiet. Otherwise the state
    // is unusable and the reminder goes out without a rate limit.
    fire = r.error().kind != Error::Kind::Busy && tier != Tier::None;
  }
  return fire;
}

std::string reminder_text(Tier tier, const ContextFigure& f, const core::ContextConfig&,
                          bool subagent, bool window_countdown) {
  std::string figure = figure_head(f, window_countdown);
  const std::string& head = figure;
  if (subagent) {
    switch (tier) {
      case Tier::Warn:
        return head + " in this subagent. Keep further tool output small.";
      case Tier::Recommend:
        return head +
               " in this subagent. Plan to finish the task and return a concise result soon.";
      case Tier::Urgent:
        return head +
               " in this subagent. Finish now and return a concise result before the window fills.";
      case Tier::None:
        break;
    }
    return head + ".";
  }
  std::string compaction =
      !f.auto_compact
          ? std::string("auto-compaction is off, so the session stops when the window is full")
      : f.usable >= f.window ? std::string("auto-compaction (lossy) starts when the window is full")
      : f.basis == core::Basis::Usable
          ? std::string("auto-compaction (lossy) starts when the usable part is full")
          : fmt::format("auto-compaction (lossy) starts at about {}% of the window",
                        f.usable * 100 / std::max<int64_t>(f.window, 1));
  switch (tier) {
    case Tier::Warn:
      return head +
             ". Response quality can start to degrade at this level. /trim writes a copy of this "
             "session with large old tool outputs cut, to resume in place of this one; "
             "consider it if responses feel degraded.";
    case Tier::Recommend:
      return head +
             ". /trim is recommended now; /rollover (a fresh session with a handoff summary "
             "and a searchable archive) if trimming does not free enough. /pin the facts that "
             "must survive a compaction.";
    case Tier::Urgent:
      return head +
             fmt::format(". Close to the limit: {}. Use /trim or /rollover now.", compaction);
    case Tier::None:
      break;
  }
  return head + ".";
}

std::string compact_due_text(const ContextFigure& f, const CompactDue& due, bool window_countdown) {
  std::string out = figure_head(f, window_countdown);
  out +=
      fmt::format(", past the point the user set for a compaction ([compact] at = {}%). ", due.at);
  if (due.rollover) {
    out +=
        "Run /rollover now (a fresh session with your handoff summary; the archive keeps this "
        "one).";
  } else {
    out +=
        "Only the user can start it: ask them to type /compact now (nothing else is needed: "
        "ctxkit gives the summarizer the pinned facts and checks that the summary kept them).";
  }
  if (due.pin_total > 0) {
    size_t shown = 0;
    const std::string list =
        render_pin_list(fmt::format(" It keeps these {} pinned fact{}:", due.pin_total,
                                    due.pin_total == 1 ? "" : "s"),
                        due.pins, due.pin_total, "ctx-pin list", &shown);
    out += list.substr(0, list.find_last_not_of('\n') + 1);
    out += "\n/pin first anything else that must survive.";
  } else {
    out += " No fact is pinned: /pin first what must survive it word for word.";
  }
  return out;
}

std::string compact_due_user_text(const ContextFigure& f, const CompactDue& due) {
  const std::string pins =
      due.pin_total > 0
          ? fmt::format("; it keeps your {} pin{}", due.pin_total, due.pin_total == 1 ? "" : "s")
          : std::string("; nothing is pinned (ctx-pin add \"…\")");
  return fmt::format("ctxkit: context at {}% ([compact] at = {}%): type {}{}", f.percent, due.at,
                     due.rollover ? "/rollover" : "/compact", pins);
}

std::string figure_words(const ContextFigure& f) {
  const std::string tokens = short_tokens(f.tokens);
  if (f.usable < f.window && !f.point.threshold && f.auto_compact) {
    // reserved_tokens set by the user: the usable part is theirs, not the client's.
    if (f.basis == core::Basis::Usable)
      return fmt::format("{}% · {} of {} usable · {} window", f.percent, tokens,
                         short_tokens(f.usable), short_tokens(f.window));
    return fmt::format("{}% of window · {} of {}", f.percent, tokens, short_tokens(f.window));
  }
  if (!f.auto_compact)
    return fmt::format("{}% of window · {} of {} · auto-compact off", f.percent, tokens,
                       short_tokens(f.window));
  if (!f.point.threshold)
    return fmt::format("{}% of window · {} of {}", f.percent, tokens, short_tokens(f.window));
  if (f.basis == core::Basis::Window)
    return fmt::format("{}% of window · {} of {} · auto-compact at {}", f.percent, tokens,
                       short_tokens(f.window), short_tokens(f.usable));
  return fmt::format("{}% · {} of {} · {}", f.percent, tokens, short_tokens(f.usable),
                     compact_words(f));
}

std::string compact_words(const ContextFigure& f) {
  if (f.point.threshold && f.auto_compact && f.point.tokens > 0) {
    const double left = static_cast<double>(f.point.tokens - std::min(f.tokens, f.point.tokens)) /
                        static_cast<double>(f.point.tokens) * 100.0;
    return fmt::format("{}% until auto-compact", static_cast<int64_t>(std::lround(left)));
  }
  const int64_t whole =
      f.window > 0 ? f.tokens / f.window * 100 + f.tokens % f.window * 100 / f.window : 0;
  return fmt::format("{}% of window", std::min<int64_t>(whole, 1'000'000));
}

}  // namespace ctxkit::context
