#include "runner/policy.hpp"

#include <algorithm>
#include <vector>

#include "util/text.hpp"

namespace ctxkit::runner {
namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The marker's payload when `line` is a marker line ("DONE", "BLOCKED why"), else nullopt.
std::optional<std::string_view> marker_payload(std::string_view line) {
  line = trim(line);
  while (!line.empty() && (line.front() == '*' || line.front() == '`' || line.front() == '>' ||
                           line.front() == '-' || line.front() == ' '))
    line.remove_prefix(1);
  if (line.size() < kDoneMarker.size() ||
      util::ascii_lower(line.substr(0, kDoneMarker.size())) != util::ascii_lower(kDoneMarker))
    return std::nullopt;
  line.remove_prefix(kDoneMarker.size());
  while (!line.empty() &&
         (line.back() == '*' || line.back() == '`' || line.back() == '.' || line.back() == ' '))
    line.remove_suffix(1);
  return trim(line);
}

}  // namespace

std::optional<ContextMode> parse_context_mode(std::string_view text) {
  if (text == "continuous") return ContextMode::Continuous;
  if (text == "fresh-per-task") return ContextMode::FreshPerTask;
  if (text == "fresh-per-iteration") return ContextMode::FreshPerIteration;
  if (text == "hybrid") return ContextMode::Hybrid;
  if (text == "auto") return ContextMode::Auto;
  return std::nullopt;
}

std::string_view to_string(ContextMode mode) {
  switch (mode) {
    case ContextMode::Continuous:
      return "continuous";
    case ContextMode::FreshPerTask:
      return "fresh-per-task";
    case ContextMode::FreshPerIteration:
      return "fresh-per-iteration";
    case ContextMode::Hybrid:
      return "hybrid";
    case ContextMode::Auto:
      return "auto";
  }
  return "continuous";
}

ContextMode task_mode(ContextMode run_mode, std::optional<ContextMode> own) {
  return own ? *own : run_mode;
}

bool carries_summary(ContextMode mode) {
  return mode == ContextMode::Hybrid || mode == ContextMode::Auto;
}

std::string_view to_string(AutoAction action) {
  switch (action) {
    case AutoAction::Keep:
      return "keep";
    case AutoAction::Fresh:
      return "fresh";
    case AutoAction::Compact:
      return "compact";
  }
  return "keep";
}

AutoAction decide_auto(std::optional<int> percent, bool new_task, const AutoThresholds& t) {
  if (!percent) return AutoAction::Keep;
  if (new_task) return *percent >= t.fresh_at ? AutoAction::Fresh : AutoAction::Keep;
  return *percent >= t.compact_at ? AutoAction::Compact : AutoAction::Keep;
}

std::optional<BudgetOverrun> budget_reached(const Budget& budget, const Spent& spent) {
  if (budget.max_tokens && spent.tokens >= *budget.max_tokens)
    return BudgetOverrun{"tokens", static_cast<double>(*budget.max_tokens),
                         static_cast<double>(spent.tokens),
                         static_cast<double>(spent.tokens - *budget.max_tokens)};
  if (budget.max_cost_usd && spent.cost_usd >= *budget.max_cost_usd)
    return BudgetOverrun{"cost", *budget.max_cost_usd, spent.cost_usd,
                         spent.cost_usd - *budget.max_cost_usd};
  return std::nullopt;
}

SessionPlan plan_session(ContextMode mode, bool have_session, bool new_task, bool workflow_clear,
                         bool workflow_compact, AutoAction auto_action) {
  SessionPlan p;
  if (!have_session) {
    p.fresh = true;
    p.reason = "start";
  } else if (workflow_clear) {
    p.fresh = true;
    p.reason = "workflow clear";
  } else if (mode == ContextMode::FreshPerIteration ||
             (new_task && (mode == ContextMode::FreshPerTask || mode == ContextMode::Hybrid))) {
    p.fresh = true;
    p.reason = "mode";
  } else if (mode == ContextMode::Auto && auto_action == AutoAction::Fresh) {
    p.fresh = true;
    p.reason = "auto";
  }
  if (workflow_compact) {
    p.compact = !p.fresh;
    p.compact_skipped = p.fresh;
    p.compact_why = "workflow compact";
  } else if (mode == ContextMode::Auto && auto_action == AutoAction::Compact && !p.fresh) {
    p.compact = true;
    p.compact_why = "auto";
  }
  return p;
}

void apply_compact_at(SessionPlan& plan, bool rollover) {
  if (plan.fresh || plan.compact) return;
  if (rollover) {
    plan.fresh = true;
    plan.reason = "[compact] at";
  } else {
    plan.compact = true;
    plan.compact_why = "[compact] at";
  }
}

ParsedReport parse_task_report(std::string_view final_message) {
  ParsedReport out;
  for (auto line : util::split_lines(final_message)) {
    auto payload = marker_payload(line);
    if (!payload) continue;
    const std::string word = util::ascii_lower(payload->substr(0, payload->find_first_of(" \t:")));
    if (word == "done") {
      out = {TaskReport::Done, {}};
    } else if (word == "blocked") {
      std::string_view reason =
          payload->substr(std::min(payload->size(), std::string_view("blocked").size()));
      while (!reason.empty() &&
             (reason.front() == ':' || reason.front() == ' ' || reason.front() == '-'))
        reason.remove_prefix(1);
      out = {TaskReport::Blocked, std::string(trim(reason))};
    } else {
      out = {};
    }
  }
  return out;
}

std::string strip_task_report(std::string_view final_message) {
  std::string out;
  for (auto line : util::split_lines(final_message)) {
    if (marker_payload(line)) continue;
    if (!out.empty()) out += '\n';
    out += line;
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::optional<OnFail> parse_on_fail(std::string_view text) {
  if (text == "retry") return OnFail::Retry;
  if (text == "skip") return OnFail::Skip;
  if (text == "abort") return OnFail::Abort;
  return std::nullopt;
}

std::string_view to_string(OnFail f) {
  switch (f) {
    case OnFail::Retry:
      return "retry";
    case OnFail::Skip:
      return "skip";
    case OnFail::Abort:
      return "abort";
  }
  return "abort";
}

std::optional<OnLimit> parse_on_limit(std::string_view text) {
  if (text == "wait") return OnLimit::Wait;
  if (text == "stop") return OnLimit::Stop;
  return std::nullopt;
}

std::string_view to_string(OnLimit o) {
  return o == OnLimit::Stop ? "stop" : "wait";
}

LimitWait decide_limit_wait(const LimitPolicy& policy, std::optional<int64_t> reset_epoch,
                            int64_t now_epoch, int in_a_row) {
  if (policy.on_limit == OnLimit::Stop) return {true, 0, "on_limit stop"};
  const int64_t ceiling = std::max<int64_t>(policy.max_wait_seconds, 1);
  if (reset_epoch) {
    const int64_t until = std::max<int64_t>(*reset_epoch - now_epoch, 1);
    if (until > ceiling) return {true, until, "the reset lies past limit_max_wait_seconds"};
    return {false, until, "reset"};
  }
  int64_t wait = std::max<int64_t>(policy.backoff_seconds, 1);
  for (int i = 1; i < in_a_row && wait < ceiling; ++i) wait *= 2;
  return {false, std::min(wait, ceiling), "backoff"};
}

std::string_view to_string(AfterCall a) {
  switch (a) {
    case AfterCall::LimitWait:
      return "limit wait";
    case AfterCall::Done:
      return "done";
    case AfterCall::Again:
      return "again";
    case AfterCall::Retry:
      return "retry";
    case AfterCall::Skip:
      return "skip";
    case AfterCall::Abort:
      return "abort";
  }
  return "abort";
}

AfterCall decide_after_call(const CallOutcome& c) {
  if (c.limit) return AfterCall::LimitWait;
  if (c.ok && c.report == TaskReport::Done) return AfterCall::Done;
  const bool blocked = c.report == TaskReport::Blocked;
  if (c.attempt < c.max_attempts && !blocked) return AfterCall::Again;
  // A BLOCKED task is not tried again from the start: under retry it is skipped.
  if (c.on_fail == OnFail::Retry) return blocked ? AfterCall::Skip : AfterCall::Retry;
  if (c.on_fail == OnFail::Skip) return AfterCall::Skip;
  return AfterCall::Abort;
}

}  // namespace ctxkit::runner
