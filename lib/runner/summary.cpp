#include "runner/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "runner/anchor.hpp"
#include "util/text.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxFiles = 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '-' || s.front() == '*'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

}  // namespace

std::string build_task_summary(const SummaryInputs& in, size_t max_lines) {
  std::vector<std::string> out;
  out.push_back(fmt::format("Task {}: {}", in.task_id, in.title));
  out.push_back(fmt::format("Status: {}", in.status));
  out.push_back("");
  out.push_back("Files changed:");
  if (in.files_changed.empty()) out.push_back("- none recorded");
  for (size_t i = 0; i < in.files_changed.size() && i < kMaxFiles; ++i)
    out.push_back("- " + in.files_changed[i]);
  if (in.files_changed.size() > kMaxFiles)
    out.push_back(fmt::format("- ... and {} more", in.files_changed.size() - kMaxFiles));
  out.push_back("");
  out.push_back("Key decisions:");
  std::vector<std::string> decisions;
  std::set<std::string> seen;
  for (const auto* text : {&in.progress_tail, &in.final_message})
    for (auto line : util::split_lines(*text)) {
      auto t = trim(line);
      if (!starts_with_ci(t, "Decision:")) continue;
      std::string d(trim(t.substr(9)));
      if (d.empty() || !seen.insert(d).second) continue;
      decisions.push_back(d);
    }
  // The newest ten.
  const size_t first = decisions.size() > 10 ? decisions.size() - 10 : 0;
  if (decisions.empty()) out.push_back("- none recorded");
  for (size_t i = first; i < decisions.size(); ++i) out.push_back("- " + decisions[i]);
  out.push_back("");
  out.push_back("Known issues:");
  std::vector<std::string> issues;
  if (!in.blocked_reason.empty()) issues.push_back(in.blocked_reason);
  for (auto line : util::split_lines(in.final_message)) {
    auto t = trim(line);
    for (std::string_view p : {"Known issue:", "Issue:", "TODO:"})
      if (starts_with_ci(t, p)) {
        std::string s(trim(t.substr(p.size())));
        if (!s.empty()) issues.push_back(s);
        break;
      }
  }
  if (issues.empty()) out.push_back("- none recorded");
  for (const auto& i : issues) out.push_back("- " + i);
  if (out.size() > max_lines) {
    out.resize(max_lines > 0 ? max_lines - 1 : 0);
    if (max_lines > 0) out.push_back("[... summary cut at summary_max_lines]");
  }
  std::string text;
  for (const auto& l : out) text += l + "\n";
  return text;
}

}  // namespace ctxkit::runner
