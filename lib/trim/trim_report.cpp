#include "trim/trim_report.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace ctxkit::trim {
using ojson = nlohmann::ordered_json;

namespace {

std::string thousands(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<size_t>(i), 1, ',');
  return s;
}

// "3144 tool results, 6 images and 2 tool inputs": results cut to a notice, images replaced by a
// placeholder (also in results whose text was kept), tool inputs shortened.
std::string what_was_cut(const TrimStats& s) {
  const uint64_t cut = s.results_trimmed - s.results_images_only;
  auto n = [](uint64_t k, const char* one, const char* many) {
    return fmt::format("{} {}", thousands(k), k == 1 ? one : many);
  };
  return fmt::format("{}, {} and {}", n(cut, "tool result", "tool results"),
                     n(s.images_replaced, "image", "images"),
                     n(s.inputs_trimmed, "tool input", "tool inputs"));
}

std::string dry_run_text(const SessionTrim& done) {
  const TrimStats& s = done.outcome.stats;
  std::string out = fmt::format("{} (dry run: nothing written)\n", done.transcript.string());
  out += fmt::format("{:<20} {:>8} {:>12} {:>8} {:>14}\n", "tool", "results", "tokens", "trimmed",
                     "tokens saved");
  std::vector<std::pair<std::string, ToolTrimStats>> rows(s.per_tool.begin(), s.per_tool.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.result_chars > b.second.result_chars;
  });
  for (const auto& [tool, t] : rows)
    out += fmt::format("{:<20} {:>8} {:>12} {:>8} {:>14}{}\n", tool, t.results,
                       thousands(t.result_chars / 4), t.trimmed, thousands(t.chars_saved / 4),
                       done.tools.count(tool) ? "" : "  (not a target tool)");
  out += fmt::format("would trim {}: about {} tokens saved (threshold {} characters)\n",
                     what_was_cut(s), thousands(s.tokens_saved()), done.threshold);
  if (s.tokens_saved() < done.min_tokens_saved)
    out += fmt::format("that is below {} tokens: ctx-trim would write nothing\n",
                       done.min_tokens_saved);
  return out;
}

}  // namespace

ojson trim_report_json(const SessionTrim& done) {
  const TrimOutcome& o = done.outcome;
  const TrimStats& s = o.stats;
  ojson j;
  j["dry_run"] = done.dry_run;
  j["written"] = o.written;
  j["parent_session_id"] = done.parent_id;
  j["parent_transcript"] = done.transcript.string();
  if (o.written) {
    j["session_id"] = done.new_session_id;
    j["transcript"] = o.output.string();
    j["resume_command"] = resume_command(o.cwd, done.new_session_id);
  }
  if (!done.dry_run) j["archive"] = done.archive.transcript.string();
  j["threshold"] = done.threshold;
  j["tools"] = done.tools;
  j["keep_recent"] = done.keep_recent;
  j["results_trimmed"] = s.results_trimmed;
  j["inputs_trimmed"] = s.inputs_trimmed;
  j["images_replaced"] = s.images_replaced;
  j["results_cut"] = s.results_trimmed - s.results_images_only;
  j["chars_saved"] = s.chars_saved;
  j["tokens_saved"] = s.tokens_saved();
  j["context_percent"] = done.context_percent ? ojson(*done.context_percent) : ojson(nullptr);
  ojson per = ojson::object();
  for (const auto& [tool, t] : s.per_tool)
    per[tool] = {{"results", t.results},
                 {"result_tokens", t.result_chars / 4},
                 {"trimmed", t.trimmed},
                 {"inputs_trimmed", t.inputs_trimmed},
                 {"tokens_saved", t.chars_saved / 4},
                 {"target", done.tools.count(tool) > 0}};
  j["per_tool"] = per;
  j["late_lines"] = o.late_lines;
  if (!done.warning.empty()) j["warning"] = done.warning;
  return j;
}

std::string trim_report_text(const SessionTrim& done) {
  if (done.dry_run) return dry_run_text(done);
  const TrimOutcome& o = done.outcome;
  const TrimStats& s = o.stats;
  if (!o.written)
    return fmt::format(
        "Nothing worth trimming: about {} tokens would be saved (less than {}). No new session was "
        "written.\n",
        thousands(s.tokens_saved()), done.min_tokens_saved);
  std::vector<std::string> by_tool;
  for (const auto& [tool, t] : s.per_tool)
    if (t.trimmed || t.inputs_trimmed)
      by_tool.push_back(fmt::format("{} {}", tool, t.trimmed + t.inputs_trimmed));
  std::string out =
      fmt::format("Trimmed {} ({}): about {} tokens saved ({} characters).\n", what_was_cut(s),
                  fmt::join(by_tool, ", "), thousands(s.tokens_saved()), thousands(s.chars_saved));
  out += fmt::format("New session {} (trimmed from {}).\n", done.new_session_id, done.parent_id);
  out += fmt::format("The original is untouched and archived at {}.\n",
                     done.archive.transcript.string());
  if (o.late_lines > 0)
    out += fmt::format(
        "Note: {} lines were added to the session after the snapshot; they are not in the trimmed "
        "copy.\n",
        o.late_lines);
  out += "Continue in the trimmed session with:\n  " + resume_command(o.cwd, done.new_session_id) +
         '\n';
  return out;
}

}  // namespace ctxkit::trim
