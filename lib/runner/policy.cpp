#include "runner/policy.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ctxkit::runner {
namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The marker's payload when `line` is a marker line ("DONE", "BLOCKED why"), else nullopt.
std::optional<std::string_view> marker_payload(std::string_view line) {
  line = trim(line);
  while (!line.empty() && (line.front() == '*' || line.front() == '`' || line.front() == '>' || line.front() == '-' || line.front() == ' '))
    line.remove_prefix(1);
  if (line.size() < kDoneMarker.size() || lower(line.substr(0, kDoneMarker.size())) != lower(kDoneMarker)) return std::nullopt;
  line.remove_prefix(kDoneMarker.size());
  while (!line.empty() && (line.back() == '*' || line.back() == '`' || line.back() == '.' || line.back() == ' ')) line.remove_suffix(1);
  return trim(line);
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}
}  // namespace

std::optional<ContextMode> parse_context_mode(std::string_view text) {
  if (text == "continuous") return ContextMode::Continuous;
  if (text == "fresh-per-task") return ContextMode::FreshPerTask;
  if (text == "fresh-per-iteration") return ContextMode::FreshPerIteration;
  if (text == "hybrid") return ContextMode::Hybrid;
  return std::nullopt;
}

std::string_view to_string(ContextMode mode) {
  switch (mode) {
    case ContextMode::Continuous: return "continuous";
    case ContextMode::FreshPerTask: return "fresh-per-task";
    case ContextMode::FreshPerIteration: return "fresh-per-iteration";
    case ContextMode::Hybrid: return "hybrid";
  }
  return "continuous";
}

SessionPlan plan_session(ContextMode mode, bool have_session, bool new_task, bool workflow_clear, bool workflow_compact) {
  SessionPlan p;
  if (!have_session) {
    p.fresh = true;
    p.reason = "start";
  } else if (workflow_clear) {
    p.fresh = true;
    p.reason = "workflow clear";
  } else if (mode == ContextMode::FreshPerIteration || (new_task && (mode == ContextMode::FreshPerTask || mode == ContextMode::Hybrid))) {
    p.fresh = true;
    p.reason = "mode";
  }
  if (workflow_compact) {
    p.compact = !p.fresh;
    p.compact_skipped = p.fresh;
  }
  return p;
}

ParsedReport parse_task_report(std::string_view final_message) {
  ParsedReport out;
  for (auto line : lines_of(final_message)) {
    auto payload = marker_payload(line);
    if (!payload) continue;
    const std::string word = lower(payload->substr(0, payload->find_first_of(" \t:")));
    if (word == "done") {
      out = {TaskReport::Done, {}};
    } else if (word == "blocked") {
      std::string_view reason = payload->substr(std::min(payload->size(), std::string_view("blocked").size()));
      while (!reason.empty() && (reason.front() == ':' || reason.front() == ' ' || reason.front() == '-')) reason.remove_prefix(1);
      out = {TaskReport::Blocked, std::string(trim(reason))};
    } else {
      out = {};
    }
  }
  return out;
}

std::string strip_task_report(std::string_view final_message) {
  std::string out;
  for (auto line : lines_of(final_message)) {
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
    case OnFail::Retry: return "retry";
    case OnFail::Skip: return "skip";
    case OnFail::Abort: return "abort";
  }
  return "abort";
}

}  // namespace ctxkit::runner
