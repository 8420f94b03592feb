#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "report/timeline.hpp"

namespace ctxkit::report {

// How a page is drawn.
struct PageOptions {
  size_t max_points = 2000;  // the curve's points at most, over all sessions (every event kept)
  std::string generator;     // "ctx-report <version>", in the page's footer
};

// Text made safe inside HTML and SVG elements and attribute values (& < > " ' escaped; control
// characters but tab and newline dropped).
std::string html_escape(std::string_view text);

// One self-contained HTML page of a timeline: the context curve of each session (inline SVG),
// the compaction point as a line, every event as a mark on the time axis with its label (class
// "ev", one per event), a thin lane for each subagent, the handovers of a line of work, and a
// table of every event with its `session:line`. Inline CSS (a dark theme by
// prefers-color-scheme, print rules), no script, nothing fetched. What is missing (no usage
// figure, a session not found) is said on the page.
std::string render_timeline_page(const Timeline& timeline, const PageOptions& options);

// One self-contained HTML page of ctx-run reports (runner::run_report's JSON): per run its
// tasks' tokens, cost and context mode, and with several runs a bar chart of their totals side by
// side. Fields an older run folder lacks are shown as missing, never fail.
std::string render_run_page(const std::vector<nlohmann::ordered_json>& reports,
                            const PageOptions& options);

}  // namespace ctxkit::report
