#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/reminder_state.hpp"
#include "util/error.hpp"

namespace ctxkit::context {

// Reminder tiers, in increasing urgency.
enum class Tier : int { None = 0, Warn = 1, Recommend = 2, Urgent = 3 };

// The tier a percentage falls in under the configured thresholds.
Tier tier_for(int percent, const core::ContextConfig& config);

// Whether to remind now, and what to record.
struct ReminderDecision {
  bool fire = false;
  std::optional<core::ReminderState> store;  // nullopt: leave the stored state as it is
};

// The rate limit. Below the warn threshold nothing fires and a stored tier is re-armed (set to
// none); a tier higher than the last one reminded fires at once; a lower tier than the last one
// (usage dropped: compaction, trim) fires at once and re-arms; the same tier repeats once
// `interval_ms` has passed since the last reminder.
ReminderDecision decide_reminder(const std::optional<core::ReminderState>& previous, Tier tier,
                                 int64_t now_ms, int64_t interval_ms);

// How the hook got at the rate limit's state.
enum class RateLimitAccess {
  Locked,       // another hook holds the state: it is reminding; stay quiet
  Unavailable,  // no state (it could not be opened): remind without a rate limit
  Unread,       // the session's row could not be read: remind without a rate limit
  Read,         // read: the rate limit applies
};

// A read-decide-write of the session's reminder state under the state's write lock: calls
// `decide` with the state as it is then, stores what it returns (nullopt: nothing).
using ReminderUpdate =
    std::function<Result<void>(const std::function<std::optional<core::ReminderState>(
                                   const std::optional<core::ReminderState>&)>& decide)>;

// Whether the reminder of `tier` goes out now. With the state read (`read`: the session's
// reminder state as read with its row), decide_reminder decides; when it would record a change,
// it decides again inside `update`, as another hook of the same session may have reminded
// meanwhile, and that second decision holds. An update that fails sets `problem`: when the state
// was locked the reminder stays quiet, otherwise it goes out without a rate limit.
bool reminder_fires(RateLimitAccess access, const std::optional<core::ReminderState>& read,
                    Tier tier, int64_t now_ms, int64_t interval_ms, const ReminderUpdate& update,
                    std::string& problem);

// The text for the model. It begins "Context at N%" and states tokens on the configured basis;
// for the main session it names /trim and /rollover, for a subagent it advises finishing up.
// With `window_countdown` (the client already appends a live countdown of the window to each
// tool result: totalTokensReminder "countdown") it states no figure, only what to do.
std::string reminder_text(Tier tier, const ContextFigure& figure, const core::ContextConfig& config,
                          bool subagent, bool window_countdown = false);

// The reminder when the context reached the user's `[compact] at` and no supervisor carries the
// compaction out: it names the one command the user types (`/compact`, or `/rollover` with
// action "rollover") and the pins the compaction keeps (`pins`: their texts, oldest first, as many
// as were read; `pin_total`: how many there are). For the model; `for_user` gives the short line
// for the user (the hook's systemMessage), who is the one to type it.
struct CompactDue {
  int at = 0;
  bool rollover = false;
  std::vector<std::string> pins;
  int64_t pin_total = 0;
};
std::string compact_due_text(const ContextFigure& figure, const CompactDue& due,
                             bool window_countdown = false);
std::string compact_due_user_text(const ContextFigure& figure, const CompactDue& due);

// The status line's figure, in the client's own words: "52% · 87k of 167k · 48% until
// auto-compact" where the client compacts at a threshold, "42% of window · 84k of 200k" where it
// compacts only when the API refuses the prompt (and "· auto-compact off" when it never does);
// a usable part set by reserved_tokens reads "· 484k of 967k usable · 1M window". Without the
// leading "Context ".
std::string figure_words(const ContextFigure& figure);

// The client's own words for how far the session is from compaction: "48% until auto-compact"
// (round((point - tokens) / point * 100), as the client counts it) where it compacts at a
// threshold, else "42% of window".
std::string compact_words(const ContextFigure& figure);

}  // namespace ctxkit::context
