#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::runner {

// One run's figures for `ctx-run report`: per task and for the run (iterations, resets,
// compactions, tokens by kind, anchoring tokens and their share of all tokens, wall time), and
// the runner's own time per iteration (everything but the client), from run.json and events.jsonl.
[[nodiscard]] Result<nlohmann::ordered_json> run_report(const std::filesystem::path& folder);

// Renders reports as text: each run's task table, then, with several runs, the runs side by side.
void print_reports(const std::vector<nlohmann::ordered_json>& reports, std::ostream& out);

// The run folders of `project`, oldest first (run ids begin with their UTC start time).
std::vector<std::filesystem::path> list_runs(const std::filesystem::path& project);

}  // namespace ctxkit::runner
