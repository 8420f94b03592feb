#include "report/html_page.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "context/context_meter.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::report {
using ojson = nlohmann::ordered_json;

namespace {

// The chart's geometry, in SVG user units (the SVG scales to the page's width).
constexpr double kWidth = 1000;
constexpr double kLeft = 64, kRight = 56;  // room for the token and percent axes
constexpr double kLabelRow = 16;           // one row of event labels
constexpr int kLabelRows = 4;
constexpr double kPlotTop = 12 + kLabelRow * kLabelRows;
constexpr double kPlotHeight = 240;
constexpr double kAxisHeight = 36;
constexpr double kHeight = kPlotTop + kPlotHeight + kAxisHeight;
constexpr double kLaneHeight = 26;

const char* kStyle = R"css(
:root{--bg:#ffffff;--fg:#1d1f23;--muted:#5f6670;--grid:#e3e6ea;--curve:#2458c6;--fill:rgba(36,88,198,.08);
--point:#c2410c;--reminder:#a16207;--compaction:#7c3aed;--trim:#047857;--rollover:#be123c;
--workflow:#0e7490;--run:#4b5563;--cap:#9d174d;--pins:#1d4ed8;--lane:#6b7280;--row:#f5f6f8}
@media (prefers-color-scheme: dark){:root{--bg:#15171b;--fg:#e6e8eb;--muted:#9aa3ad;--grid:#2c3038;
--curve:#7aa7ff;--fill:rgba(122,167,255,.10);--point:#fb923c;--reminder:#facc15;--compaction:#c4b5fd;
--trim:#34d399;--rollover:#fb7185;--workflow:#67e8f9;--run:#cbd5e1;--cap:#f9a8d4;--pins:#93c5fd;
--lane:#9ca3af;--row:#1d2026}}
*{box-sizing:border-box}
body{margin:0;padding:20px 24px;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px}
.meta{color:var(--muted);margin:0 0 12px}
.missing{border-left:4px solid var(--point);padding:6px 12px;margin:12px 0;background:var(--row)}
.missing p{margin:4px 0}
svg{display:block;width:100%;height:auto;max-width:1100px}
svg text{fill:var(--fg);font-size:11px;font-family:inherit}
.grid{stroke:var(--grid);stroke-width:1}
.axis-label{fill:var(--muted)}
.curve{fill:none;stroke:var(--curve);stroke-width:1.6;stroke-linejoin:round}
.area{fill:var(--fill);stroke:none}
.point-line{stroke:var(--point);stroke-width:1.4;stroke-dasharray:6 4}
.point-label{fill:var(--point)}
.ev line{stroke-width:1;stroke-dasharray:2 3;opacity:.75}
.ev path{stroke:none}
.ev-reminder line,.ev-reminder path{stroke:var(--reminder);fill:var(--reminder)}
.ev-compaction line,.ev-compaction path{stroke:var(--compaction);fill:var(--compaction)}
.ev-trim line,.ev-trim path{stroke:var(--trim);fill:var(--trim)}
.ev-rollover line,.ev-rollover path{stroke:var(--rollover);fill:var(--rollover)}
.ev-workflow line,.ev-workflow path{stroke:var(--workflow);fill:var(--workflow)}
.ev-run line,.ev-run path{stroke:var(--run);fill:var(--run)}
.ev-cap line,.ev-cap path{stroke:var(--cap);fill:var(--cap)}
.ev-pins line,.ev-pins path{stroke:var(--pins);fill:var(--pins)}
.handover{stroke:var(--rollover);stroke-width:2}
.session-label{fill:var(--muted)}
.lane path{fill:none;stroke:var(--lane);stroke-width:1.2}
.lane text{fill:var(--muted);font-size:10px}
table{border-collapse:collapse;width:100%;max-width:1100px;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--grid);vertical-align:top}
tbody tr:nth-child(even){background:var(--row)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.cite{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-all}
.kind{font-weight:600}
footer{color:var(--muted);margin-top:18px;font-size:12px}
@media print{body{padding:0;background:#fff;color:#000}
:root{--bg:#fff;--fg:#000;--muted:#444;--grid:#ccc;--row:#f3f3f3}
tr{break-inside:avoid}figure{break-inside:avoid;margin:0}}
)css";

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string clock_time(int64_t ms) {
  if (ms == 0) return "?";
  std::string t = util::format_iso8601_ms(ms);  // YYYY-MM-DDTHH:MM:SS.mmmZ
  t[10] = ' ';
  return t.substr(5, 14);  // MM-DD HH:MM:SS
}

std::string table_time(int64_t ms) {
  if (ms == 0) return "?";
  std::string t = util::format_iso8601_ms(ms);
  t[10] = ' ';
  return t.substr(0, 19);
}

// A session's stretch of the time axis: sessions end to end, each as wide as its share of the
// time they took (at least a little, so that a session without times still shows).
struct Segment {
  int64_t t0 = 0, t1 = 0;
  double x0 = 0, x1 = 0;
  double x(int64_t t) const {
    if (t <= 0 || t1 <= t0) return x0;
    double f = static_cast<double>(std::clamp(t, t0, t1) - t0) / static_cast<double>(t1 - t0);
    return x0 + f * (x1 - x0);
  }
};

std::vector<Segment> layout(const Timeline& t) {
  std::vector<Segment> out(t.sessions.size());
  double total = 0;
  for (size_t i = 0; i < t.sessions.size(); ++i) {
    const auto& s = t.sessions[i];
    out[i].t0 = s.start_ms;
    out[i].t1 = std::max(s.end_ms, s.start_ms);
    total += static_cast<double>(out[i].t1 - out[i].t0);
  }
  const double plot = kWidth - kLeft - kRight;
  const double least = t.sessions.size() > 1 ? std::max(total * 0.06, 1.0) : 1.0;
  double sum = 0;
  std::vector<double> w(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    w[i] = std::max(static_cast<double>(out[i].t1 - out[i].t0), least);
    sum += w[i];
  }
  double x = kLeft;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].x0 = x;
    x += sum > 0 ? plot * w[i] / sum : plot;
    out[i].x1 = x;
  }
  return out;
}

// Which session an event is drawn in: the one it names (a subagent's "<id>/agent-…" counts as
// its session's), else the first.
size_t session_of(const Timeline& t, const Event& e) {
  const std::string id = e.session.substr(0, e.session.find('/'));
  for (size_t i = 0; i < t.sessions.size(); ++i)
    if (t.sessions[i].session_id == id) return i;
  return 0;
}

// A round step for about five ticks up to `top`.
int64_t tick_step(int64_t top) {
  const double raw = static_cast<double>(top) / 5.0;
  const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) return std::max<int64_t>(1, static_cast<int64_t>(m * mag));
  return std::max<int64_t>(1, static_cast<int64_t>(10 * mag));
}

void missing_section(std::string& h, const Timeline& t) {
  std::vector<std::string> all = t.notes;
  for (const auto& s : t.sessions)
    for (const auto& m : s.missing) all.push_back(m);
  if (all.empty()) return;
  h += "<section class=\"missing\" aria-label=\"what is missing\">";
  for (const auto& m : all) h += "<p class=\"note\">" + html_escape(m) + "</p>";
  h += "</section>\n";
}

void chart(std::string& h, const Timeline& t, const std::vector<Segment>& seg, size_t max_points) {
  int64_t top = 1000;
  size_t total = 0;
  for (const auto& s : t.sessions) {
    total += s.points.size();
    top = std::max(top, s.point_tokens);
    for (const auto& p : s.points) top = std::max(top, p.tokens);
  }
  const int64_t step = tick_step(top);
  top = (top / step + 1) * step;
  auto y = [&](int64_t tokens) {
    return kPlotTop + kPlotHeight -
           kPlotHeight * static_cast<double>(tokens) / static_cast<double>(top);
  };
  const double plot_right = kWidth - kRight;
  const int64_t denominator = t.sessions.empty() ? 0 : t.sessions.front().denominator;
  h += fmt::format(
      "<figure class=\"chart\"><svg viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"context tokens over time\">\n",
      num(kWidth), num(kHeight));
  // The token axis (left) and the percent axis (right, of the first session's basis).
  for (int64_t v = 0; v <= top; v += step) {
    const double yy = y(v);
    h += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", num(kLeft),
                     num(yy), num(plot_right), num(yy));
    h += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                     num(kLeft - 6), num(yy + 4), context::short_tokens(v));
    if (denominator > 0)
      h += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\">{}%</text>",
                       num(plot_right + 6), num(yy + 4), percent_of(v, denominator));
  }
  // Each session's curve, its compaction point and its times.
  for (size_t i = 0; i < t.sessions.size(); ++i) {
    const auto& s = t.sessions[i];
    const Segment& g = seg[i];
    if (t.sessions.size() > 1) {
      h += fmt::format("<text class=\"session-label\" x=\"{}\" y=\"{}\">#{} {}</text>",
                       num(g.x0 + 4), num(kPlotTop + 12), s.number ? s.number : int(i + 1),
                       html_escape(s.session_id.substr(0, 8)));
    }
    const size_t share =
        total == 0 ? max_points : std::max<size_t>(4, max_points * s.points.size() / total);
    std::string line;
    double first_x = -1, last_x = 0;
    for (const auto& p : downsample(s.points, share)) {
      if (p.at_ms == 0) continue;
      const double x = g.x(p.at_ms);
      if (first_x < 0) first_x = x;
      last_x = x;
      line += num(x) + "," + num(y(p.tokens)) + " ";
    }
    if (!line.empty()) {
      h += fmt::format("<polygon class=\"area\" points=\"{}{},{} {},{}\"/>", line, num(last_x),
                       num(y(0)), num(first_x), num(y(0)));
      h += fmt::format("<polyline class=\"curve\" data-session=\"{}\" points=\"{}\"/>\n",
                       html_escape(s.session_id), line);
    }
    if (s.point_tokens > 0 && s.point_tokens <= top) {
      h += fmt::format(
          "<line class=\"point-line\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>{}</title>"
          "</line>",
          num(g.x0), num(y(s.point_tokens)), num(g.x1), num(y(s.point_tokens)),
          html_escape(s.point_words));
      h += fmt::format(
          "<text class=\"point-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">compacts at "
          "{}</text>",
          num(g.x1 - 4), num(y(s.point_tokens) - 4), context::short_tokens(s.point_tokens));
    }
    const double base = kPlotTop + kPlotHeight;
    h += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\">{}</text>", num(g.x0),
                     num(base + 30), clock_time(s.start_ms));
    if (g.x1 - g.x0 > 120 || i + 1 == t.sessions.size())
      h += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                       num(g.x1), num(base + 30), clock_time(s.end_ms));
    if (i > 0)
      h += fmt::format("<line class=\"handover\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                       num(g.x0), num(kPlotTop), num(g.x0), num(base));
  }
  h += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", num(kLeft),
                   num(kPlotTop + kPlotHeight), num(plot_right), num(kPlotTop + kPlotHeight));
  // Every event: a dashed line through the plot, a mark on the time axis, and its label in the
  // first row above the plot where it does not run into the one before (the last row else).
  std::vector<double> row_end(kLabelRows, -1e9);
  const double base = kPlotTop + kPlotHeight;
  for (size_t n = 0; n < t.events.size(); ++n) {
    const Event& e = t.events[n];
    const double x = seg.empty() ? kLeft : seg[session_of(t, e)].x(e.at_ms);
    const double width = 6.2 * static_cast<double>(e.label.size()) + 8;
    const double label_x = std::min(x, kWidth - width);  // kept inside the chart on the right
    int row = kLabelRows - 1;
    for (int r = 0; r < kLabelRows; ++r)
      if (row_end[static_cast<size_t>(r)] < label_x) {
        row = r;
        break;
      }
    row_end[static_cast<size_t>(row)] = label_x + width;
    const double label_y = 12 + kLabelRow * (row + 1) - 4;
    h += fmt::format(
        "<g class=\"ev ev-{}\" data-kind=\"{}\" data-index=\"{}\"><title>{} · {} · {}</title>"
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
        "<path d=\"M{} {}l-4 8h8z\"/>"
        "<text class=\"ev-label\" x=\"{}\" y=\"{}\">{}</text></g>\n",
        html_escape(e.kind), html_escape(e.kind), n + 1, table_time(e.at_ms), html_escape(e.detail),
        html_escape(citation(e)), num(x), num(label_y + 3), num(x), num(base), num(x),
        num(base + 1), num(label_x + 2), num(label_y), html_escape(e.label));
  }
  h += "</svg></figure>\n";
}

void lanes(std::string& h, const Timeline& t, const std::vector<Segment>& seg) {
  size_t count = 0;
  for (const auto& s : t.sessions) count += s.subagents.size();
  if (count == 0) return;
  h += "<h2>Subagents</h2>\n";
  h += fmt::format(
      "<figure class=\"lanes\"><svg viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"subagents' context\">\n",
      num(kWidth), num(kLaneHeight * static_cast<double>(count) + 4));
  double top = 2;
  for (size_t i = 0; i < t.sessions.size(); ++i) {
    for (const auto& lane : t.sessions[i].subagents) {
      int64_t peak = 1;
      for (const auto& p : lane.points) peak = std::max(peak, p.tokens);
      std::string d;
      for (const auto& p : downsample(lane.points, 200)) {
        if (p.at_ms == 0) continue;
        const double yy =
            top + kLaneHeight - 4 -
            (kLaneHeight - 8) * static_cast<double>(p.tokens) / static_cast<double>(peak);
        d += fmt::format("{}{} {}", d.empty() ? 'M' : 'L', num(seg[i].x(p.at_ms)), num(yy));
      }
      h += fmt::format(
          "<g class=\"lane\" data-name=\"{}\"><line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" "
          "y2=\"{}\"/><text x=\"4\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">peak {}</text>"
          "<path d=\"{}\"/></g>\n",
          html_escape(lane.name), num(kLeft), num(top + kLaneHeight - 4), num(kWidth - kRight),
          num(top + kLaneHeight - 4), num(top + 15), html_escape(lane.name.substr(0, 14)),
          num(kWidth - kRight + 4), num(top + 15), context::short_tokens(peak), d);
      top += kLaneHeight;
    }
  }
  h += "</svg></figure>\n";
}

void sessions_table(std::string& h, const Timeline& t) {
  h += "<h2>Sessions</h2>\n<table class=\"sessions\"><thead><tr><th>#</th><th>session</th>"
       "<th>started</th><th>ended</th><th>end</th><th>model</th><th>readings</th><th>peak</th>"
       "<th>window</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < t.sessions.size(); ++i) {
    const auto& s = t.sessions[i];
    int64_t peak = 0;
    for (const auto& p : s.points) peak = std::max(peak, p.tokens);
    h += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"cite\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "</tr>\n",
        s.number ? s.number : int(i + 1), html_escape(s.session_id), table_time(s.start_ms),
        table_time(s.end_ms), html_escape(s.end_reason.empty() ? "open" : s.end_reason),
        html_escape(s.model.empty() ? "?" : s.model), s.points.size(),
        peak ? fmt::format("{} ({}%)", context::short_tokens(peak), percent_of(peak, s.denominator))
             : std::string("–"),
        s.window ? context::short_tokens(s.window) : std::string("?"));
  }
  h += "</tbody></table>\n";
}

void events_table(std::string& h, const Timeline& t) {
  h += fmt::format("<h2>Events ({})</h2>\n", t.events.size());
  if (t.events.empty()) {
    h += "<p class=\"meta\">No reminder, compaction, capped output, pin check, trim, rollover or "
         "workflow event.</p>\n";
    return;
  }
  h += "<table class=\"events\"><thead><tr><th>#</th><th>time (UTC)</th><th>kind</th><th>event</th>"
       "<th>session:line</th></tr></thead><tbody>\n";
  for (size_t n = 0; n < t.events.size(); ++n) {
    const Event& e = t.events[n];
    h += fmt::format(
        "<tr class=\"event\" data-kind=\"{}\"><td class=\"num\">{}</td><td>{}</td>"
        "<td class=\"kind\">{}</td><td>{}</td><td class=\"cite\">{}</td></tr>\n",
        html_escape(e.kind), n + 1, table_time(e.at_ms), html_escape(e.kind),
        html_escape(e.detail.empty() ? e.label : e.detail), html_escape(citation(e)));
  }
  h += "</tbody></table>\n";
}

void head(std::string& h, const std::string& title) {
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta name=\"color-scheme\" content=\"light dark\">";
  h += "<title>" + html_escape(title) + "</title><style>";
  h += kStyle;
  h += "</style></head><body>\n";
}

void foot(std::string& h, const PageOptions& o) {
  if (!o.generator.empty()) h += "<footer>" + html_escape(o.generator) + "</footer>\n";
  h += "</body></html>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out += c;
    }
  }
  return out;
}

std::string render_timeline_page(const Timeline& t, const PageOptions& o) {
  std::string h;
  h.reserve(64 * 1024 + t.events.size() * 600);
  head(h, t.title);
  h += "<header><h1>" + html_escape(t.title) + "</h1>";
  if (t.sessions.size() == 1) {
    const auto& s = t.sessions.front();
    h += fmt::format(
        "<p class=\"meta\">{} · client {} · window {} · percent of the {} ({}) · {}"
        "</p>",
        html_escape(s.model.empty() ? "model unknown" : s.model),
        html_escape(s.client_version.empty() ? "?" : s.client_version),
        s.window ? context::short_tokens(s.window) : std::string("?"),
        s.basis == "usable" ? "usable part" : "window",
        s.denominator ? context::short_tokens(s.denominator) : std::string("?"),
        html_escape(s.point_words));
  } else {
    h += fmt::format("<p class=\"meta\">{} sessions end to end; each handover is a red line</p>",
                     t.sessions.size());
  }
  h += "</header>\n";
  missing_section(h, t);
  const auto seg = layout(t);
  chart(h, t, seg, o.max_points);
  lanes(h, t, seg);
  events_table(h, t);
  if (t.lineage) sessions_table(h, t);
  foot(h, o);
  return h;
}

namespace {

uint64_t u64(const ojson& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() > 0)
    return static_cast<uint64_t>(it->get<int64_t>());
  return 0;
}

std::string text_of(const ojson& j, const char* key, const char* missing = "?") {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return missing;
  if (it->is_string()) return it->get<std::string>();
  return util::dump_json(*it, -1, util::BadUtf8::replace);
}

std::string cost_of(const ojson& j) {
  auto it = j.find("cost_usd");
  if (it == j.end() || !it->is_number()) return "–";
  return fmt::format("${:.4f}", it->get<double>());
}

const ojson& object_at(const ojson& j, const char* key) {
  static const ojson empty = ojson::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

// One decision of the runner in words: "auto: compact (compact_at, 79% ≥ 75%), task t1".
std::string decision_words(const ojson& d) {
  const std::string kind = text_of(d, "event");
  std::string out = kind;
  if (kind == "auto_decision")
    out = fmt::format("auto: {} ({}, {}% \u2265 {}%)", text_of(d, "decision"), text_of(d, "why"),
                      u64(d, "percent"), u64(d, "threshold"));
  else if (kind == "compact_at")
    out = fmt::format("[compact] at: {} ({}% \u2265 {}%)", text_of(d, "action"), u64(d, "percent"),
                      u64(d, "threshold"));
  else if (kind == "compacted")
    out = fmt::format("compacted ({})", text_of(d, "why"));
  else if (kind == "compact_failed")
    out = fmt::format("compaction failed: {}", text_of(d, "reason"));
  else if (kind == "compact_skipped")
    out = fmt::format("compaction skipped: {}", text_of(d, "reason"));
  else if (kind == "context_reset")
    out = fmt::format("fresh session ({})", text_of(d, "why"));
  if (auto task = text_of(d, "task_id", ""); !task.empty()) out += ", task " + task;
  if (auto at = text_of(d, "at", ""); !at.empty()) out += " at " + at;
  return out;
}

}  // namespace

// A run's calls: the context each left (a bar a call, a fresh session's bar marked, each decision
// about the session between calls a mark above its call), then a table of every call's tokens and
// cost and a list of the decisions. A report without calls (an older ctxkit's) says so.
void run_calls(std::string& h, const ojson& r) {
  const auto calls_it = r.find("calls");
  if (calls_it == r.end() || !calls_it->is_array()) {
    h += "<p class=\"meta\">No per-call figures in this run's report (a run folder from an older "
         "ctxkit?).</p>\n";
    return;
  }
  const ojson& calls = *calls_it;
  const ojson empty = ojson::array();
  const auto dec_it = r.find("decisions");
  const ojson& decisions = dec_it != r.end() && dec_it->is_array() ? *dec_it : empty;
  h += fmt::format("<h3>Calls ({})</h3>\n", calls.size());
  if (calls.empty()) {
    h += "<p class=\"meta\">No call was made.</p>\n";
    return;
  }
  // The decisions made before each call ("before_call": its number; the log's order).
  std::vector<std::vector<const ojson*>> before(calls.size() + 1);
  for (const auto& d : decisions) {
    const uint64_t n = u64(d, "before_call");
    before[n >= 1 && n <= calls.size() ? n - 1 : calls.size()].push_back(&d);
  }
  uint64_t top = 1;
  for (const auto& c : calls) top = std::max(top, u64(c, "context_tokens"));
  const double left = kLeft, right = kRight, plot_h = 180, top_y = 30;
  const double step = (kWidth - left - right) / static_cast<double>(calls.size());
  h += fmt::format(
      "<figure class=\"chart\"><svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"context "
      "after each call\">\n",
      num(kWidth), num(top_y + plot_h + 30));
  h += fmt::format(
      "<text class=\"axis-label\" x=\"4\" y=\"{}\">{}</text><text class=\"axis-label\" "
      "x=\"4\" y=\"{}\">0</text>\n",
      num(top_y + 10),
      context::short_tokens(static_cast<int64_t>(std::min<uint64_t>(top, INT64_MAX))),
      num(top_y + plot_h));
  for (size_t i = 0; i < calls.size(); ++i) {
    const ojson& c = calls[i];
    const double hgt =
        plot_h * static_cast<double>(u64(c, "context_tokens")) / static_cast<double>(top);
    const double x = left + step * static_cast<double>(i);
    const bool fresh = c.contains("fresh") && c["fresh"].is_boolean() && c["fresh"].get<bool>();
    h += fmt::format(
        "<g class=\"call{}\" data-n=\"{}\"><title>call {} · task {} · context {} · {} tokens · "
        "{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" style=\"fill:var({})\"/>"
        "</g>\n",
        fresh ? " fresh" : "", i + 1, i + 1, html_escape(text_of(c, "task_id")),
        u64(c, "context_tokens"), u64(object_at(c, "usage"), "total"), cost_of(c), num(x + 1),
        num(top_y + plot_h - hgt), num(std::max(step - 2, 1.0)), num(hgt),
        fresh ? "--trim" : "--curve");
    for (size_t k = 0; k < before[i].size(); ++k) {
      const ojson& d = *before[i][k];
      const std::string kind = text_of(d, "event");
      h += fmt::format(
          "<g class=\"decision\" data-event=\"{}\"><title>{}</title><path d=\"M{} {}l-4 -8h8z\" "
          "style=\"fill:var({})\"/></g>\n",
          html_escape(kind), html_escape(decision_words(d)), num(x + step / 2),
          num(top_y - 2 - 9 * static_cast<double>(k)),
          kind == "context_reset" ? "--rollover" : "--compaction");
    }
  }
  h += fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\">context after each call (a green bar starts "
      "a fresh session; a mark above a call is a decision made before it)</text>\n",
      num(left), num(top_y + plot_h + 22));
  h += "</svg></figure>\n";
  h += "<table class=\"calls\"><thead><tr><th>#</th><th>task</th><th>iteration</th><th>session</th>"
       "<th>context</th><th>input</th><th>cache creation</th><th>cache read</th><th>output</th>"
       "<th>cost</th><th>report</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < calls.size(); ++i) {
    const ojson& c = calls[i];
    const ojson& u = object_at(c, "usage");
    const bool fresh = c.contains("fresh") && c["fresh"].is_boolean() && c["fresh"].get<bool>();
    h += fmt::format(
        "<tr class=\"call\"><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"cite\">{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        i + 1, html_escape(text_of(c, "task_id")), u64(c, "iteration"),
        html_escape(text_of(c, "session_id", "–").substr(0, 8)), fresh ? " (fresh)" : "",
        u64(c, "context_tokens"), u64(u, "input"), u64(u, "cache_creation"), u64(u, "cache_read"),
        u64(u, "output"), cost_of(c), html_escape(text_of(c, "report", "")));
  }
  h += "</tbody></table>\n";
  if (!decisions.empty()) {
    h += fmt::format("<h3>Decisions about the session ({})</h3>\n<ul class=\"decisions\">\n",
                     decisions.size());
    for (const auto& d : decisions)
      h += fmt::format("<li data-event=\"{}\">{}</li>\n", html_escape(text_of(d, "event")),
                       html_escape(decision_words(d)));
    h += "</ul>\n";
  }
}

std::string render_run_page(const std::vector<ojson>& reports, const PageOptions& o) {
  std::string h;
  head(h, reports.size() == 1 ? "ctx-run report" : "ctx-run reports side by side");
  h += fmt::format("<header><h1>{}</h1><p class=\"meta\">{} run{}</p></header>\n",
                   reports.size() == 1 ? "ctx-run report" : "ctx-run reports side by side",
                   reports.size(), reports.size() == 1 ? "" : "s");
  std::vector<std::string> missing;
  for (const auto& r : reports) {
    if (r.is_object() && r.contains("error")) {
      missing.push_back(fmt::format("run {}: {}", text_of(r, "run_id"), text_of(r, "error")));
      continue;
    }
    if (!r.is_object() || !r.contains("totals"))
      missing.push_back(fmt::format("run {}: no totals (a run folder from an older ctxkit?)",
                                    r.is_object() ? text_of(r, "run_id") : "?"));
    if (r.is_object() && !r.contains("tasks"))
      missing.push_back(fmt::format("run {}: no tasks recorded", text_of(r, "run_id")));
  }
  if (!missing.empty()) {
    h += "<section class=\"missing\">";
    for (const auto& m : missing) h += "<p class=\"note\">" + html_escape(m) + "</p>";
    h += "</section>\n";
  }
  std::vector<const ojson*> runs;  // the reports that could be read
  for (const auto& r : reports)
    if (r.is_object() && !r.contains("error")) runs.push_back(&r);
  if (runs.size() > 1) {
    // The modes' totals side by side: one bar a run, tokens by kind stacked.
    uint64_t top = 1;
    for (const auto& r : reports)
      top = std::max(top, u64(object_at(object_at(r, "totals"), "usage"), "total"));
    const double bar_h = 26, left = 220, right = 120;
    h += fmt::format(
        "<h2>Totals</h2><figure class=\"chart\"><svg "
        "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"the runs' tokens\">\n",
        num(kWidth), num(bar_h * static_cast<double>(runs.size()) + 28));
    const char* kinds[] = {"input", "cache_creation", "cache_read", "output"};
    const char* colours[] = {"var(--curve)", "var(--compaction)", "var(--trim)", "var(--point)"};
    for (size_t i = 0; i < runs.size(); ++i) {
      const ojson& r = *runs[i];
      const ojson& u = object_at(object_at(r, "totals"), "usage");
      const double yy = 4 + bar_h * static_cast<double>(i);
      h += fmt::format("<g class=\"bar\" data-run=\"{}\"><text x=\"4\" y=\"{}\">{} · {}</text>",
                       html_escape(text_of(r, "run_id")), num(yy + 16),
                       html_escape(text_of(r, "mode")),
                       html_escape(text_of(r, "run_id").substr(0, 16)));
      double x = left;
      for (size_t k = 0; k < 4; ++k) {
        const double w = (kWidth - left - right) * static_cast<double>(u64(u, kinds[k])) /
                         static_cast<double>(top);
        h += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" style=\"fill:{}\"><title>{} {}"
            "</title></rect>",
            num(x), num(yy + 3), num(w), num(bar_h - 8), colours[k], kinds[k], u64(u, kinds[k]));
        x += w;
      }
      h += fmt::format("<text x=\"{}\" y=\"{}\">{} · {}</text></g>\n", num(x + 6), num(yy + 16),
                       context::short_tokens(
                           static_cast<int64_t>(std::min<uint64_t>(u64(u, "total"), INT64_MAX))),
                       cost_of(object_at(r, "totals")));
    }
    h += fmt::format(
        "<text class=\"axis-label\" x=\"{}\" y=\"{}\">input · cache creation · cache read · "
        "output</text>",
        num(left), num(bar_h * static_cast<double>(runs.size()) + 22));
    h += "</svg></figure>\n";
  }
  for (const ojson* run : runs) {
    const ojson& r = *run;
    h += fmt::format("<h2>Run {} · mode {} · {}</h2>\n", html_escape(text_of(r, "run_id")),
                     html_escape(text_of(r, "mode")), html_escape(text_of(r, "status")));
    h += "<table class=\"tasks\"><thead><tr><th>task</th><th>mode</th><th>iterations</th>"
         "<th>resets</th><th>compactions</th><th>tokens</th><th>peak context</th><th>cost</th>"
         "</tr></thead><tbody>\n";
    auto tasks = r.find("tasks");
    if (tasks != r.end() && tasks->is_array()) {
      for (const auto& task : *tasks) {
        if (!task.is_object()) continue;
        h += fmt::format(
            "<tr class=\"task\"><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            html_escape(text_of(task, "id")), html_escape(text_of(task, "context_mode", "–")),
            u64(task, "iterations"), u64(task, "resets"), u64(task, "compactions"),
            u64(object_at(task, "usage"), "total"), u64(task, "peak_context"), cost_of(task));
      }
    }
    const ojson& tot = object_at(r, "totals");
    h += fmt::format(
        "<tr class=\"total\"><td><b>total</b></td><td></td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td></td>"
        "<td class=\"num\">{}</td></tr>\n",
        u64(tot, "iterations"), u64(tot, "resets"), u64(tot, "compactions"),
        u64(object_at(tot, "usage"), "total"), cost_of(tot));
    h += "</tbody></table>\n";
    run_calls(h, r);
  }
  foot(h, o);
  return h;
}

}  // namespace ctxkit::report
