#include "context/reminder.hpp"

#include <fmt/core.h>

namespace ctxkit::context {

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

std::string reminder_text(Tier tier, const ContextFigure& f, const core::ContextConfig&,
                          bool subagent) {
  std::string figure = f.basis == core::Basis::Usable && f.usable < f.window
                           ? fmt::format("Context at {}% ({} of {} usable tokens)", f.percent,
                                         short_tokens(f.tokens), short_tokens(f.usable))
                           : fmt::format("Context at {}% ({} of {} tokens)", f.percent,
                                         short_tokens(f.tokens), short_tokens(f.window));
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
             "and a searchable archive) if trimming does not free enough.";
    case Tier::Urgent:
      return head +
             fmt::format(". Close to the limit: {}. Use /trim or /rollover now.", compaction);
    case Tier::None:
      break;
  }
  return head + ".";
}

}  // namespace ctxkit::context
