#include "report/timeline.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "util/time.hpp"

namespace ctxkit::report {
using ojson = nlohmann::ordered_json;

int64_t percent_of(int64_t tokens, int64_t denominator) {
  if (denominator <= 0 || tokens <= 0) return 0;
  return std::min<int64_t>(tokens, INT64_MAX / 100) * 100 / denominator;
}

std::vector<Point> downsample(const std::vector<Point>& points, size_t max_points) {
  max_points = std::max<size_t>(max_points, 4);
  if (points.size() <= max_points) return points;
  std::vector<Point> out;
  out.reserve(max_points + 2);
  const size_t n = points.size();
  const size_t buckets = max_points / 2 - 1;  // the first and the last point come on top
  out.push_back(points.front());
  for (size_t b = 0; b < buckets; ++b) {
    const size_t from = 1 + (n - 2) * b / buckets;
    const size_t to = 1 + (n - 2) * (b + 1) / buckets;  // exclusive
    if (from >= to) continue;
    size_t lo = from, hi = from;
    for (size_t i = from; i < to; ++i) {
      if (points[i].tokens < points[lo].tokens) lo = i;
      if (points[i].tokens > points[hi].tokens) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  out.push_back(points.back());
  return out;
}

void sort_events(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.at_ms < b.at_ms; });
}

std::string citation(const Event& e) {
  if (e.line == 0) return e.session;
  return fmt::format("{}:{}", e.session, e.line);
}

namespace {
ojson opt(const std::optional<int64_t>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}
ojson time_or_null(int64_t ms) {
  return ms ? ojson(util::format_iso8601_ms(ms)) : ojson(nullptr);
}
}  // namespace

nlohmann::ordered_json to_json(const Timeline& t, size_t max_points) {
  size_t total = 0;
  for (const auto& s : t.sessions) total += s.points.size();
  ojson sessions = ojson::array();
  for (const auto& s : t.sessions) {
    const size_t share =
        total == 0 ? max_points : std::max<size_t>(4, max_points * s.points.size() / total);
    ojson points = ojson::array();
    for (const auto& p : downsample(s.points, share))
      points.push_back({{"at", time_or_null(p.at_ms)},
                        {"line", p.line},
                        {"tokens", p.tokens},
                        {"percent", percent_of(p.tokens, s.denominator)}});
    ojson lanes = ojson::array();
    for (const auto& l : s.subagents) {
      ojson lp = ojson::array();
      for (const auto& p : downsample(l.points, 200))
        lp.push_back({{"at", time_or_null(p.at_ms)}, {"line", p.line}, {"tokens", p.tokens}});
      lanes.push_back({{"name", l.name}, {"readings", l.points.size()}, {"points", lp}});
    }
    sessions.push_back({{"session_id", s.session_id},
                        {"number", s.number},
                        {"transcript", s.transcript},
                        {"model", s.model},
                        {"client_version", s.client_version},
                        {"started_at", time_or_null(s.start_ms)},
                        {"ended_at", time_or_null(s.end_ms)},
                        {"end_reason", s.end_reason},
                        {"window", s.window},
                        {"basis", s.basis},
                        {"denominator", s.denominator},
                        {"compaction_point", s.point_tokens},
                        {"compaction_point_words", s.point_words},
                        {"lines", s.lines},
                        {"readings", s.points.size()},
                        {"points", points},
                        {"subagents", lanes},
                        {"missing", s.missing}});
  }
  ojson events = ojson::array();
  for (const auto& e : t.events) {
    ojson j = {{"at", time_or_null(e.at_ms)},
               {"kind", e.kind},
               {"label", e.label},
               {"detail", e.detail},
               {"session", e.session},
               {"line", e.line ? ojson(e.line) : ojson(nullptr)},
               {"cite", citation(e)},
               {"tokens_before", opt(e.tokens_before)},
               {"tokens_after", opt(e.tokens_after)},
               {"tokens_freed", opt(e.tokens_freed)}};
    if (e.kind == "reminder") j["tier"] = e.tier;
    if (e.handover) j["handover"] = true;
    events.push_back(std::move(j));
  }
  return {{"title", t.title},
          {"lineage", t.lineage},
          {"sessions", sessions},
          {"events", events},
          {"notes", t.notes}};
}

}  // namespace ctxkit::report
