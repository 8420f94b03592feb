#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-report [--session ID|PATH] [--lineage] [--json] [-o FILE]: a page (one self-contained
// HTML file) of a session's context over time and its events; with --lineage, the sessions of its
// line of work end to end. The default session is $CLAUDE_CODE_SESSION_ID's, else the newest
// transcript of the current project. Writes the page (default: <state>/reports/) and prints its
// path; --json prints the same data. What is missing (an empty transcript, no usage figure, a
// session of the line not found) is said on the page, exit 0. Exit 1 with one line for a bad
// argument, a session that cannot be found, or a page that cannot be written.
int run_report(const std::vector<std::string>& args, AppContext& ctx);

// The HTML page of `ctx-run report --html`: runner reports (run_report's JSON) as one page,
// written to `out` ("-": the output stream), its path printed. Returns the exit code.
int write_run_page(const std::vector<nlohmann::ordered_json>& reports, const std::string& out,
                   AppContext& ctx);

}  // namespace ctxkit::apps
