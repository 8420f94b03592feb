#include "runner/summary.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <set>
#include <string_view>

#include "runner/anchor.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxFiles = 20;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '-' || s.front() == '*')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
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
  for (size_t i = 0; i < in.files_changed.size() && i < kMaxFiles; ++i) out.push_back("- " + in.files_changed[i]);
  if (in.files_changed.size() > kMaxFiles) out.push_back(fmt::format("- ... and {} more", in.files_changed.size() - kMaxFiles));
  out.push_back("");
  out.push_back("Key decisions:");
  std::vector<std::string> decisions;
  std::set<std::string> seen;
  for (const auto* text : {&in.progress_tail, &in.final_message})
    for (auto line : lines_of(*text)) {
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
  for (auto line : lines_of(in.final_message)) {
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

std::string git_head(const fs::path& dir) {
  auto h = run_git(dir, {"rev-parse", "--verify", "-q", "HEAD"});
  if (!h) return {};
  while (!h->empty() && (h->back() == '\n' || h->back() == ' ')) h->pop_back();
  return *h;
}

std::vector<std::string> changed_files(const fs::path& dir, const std::string& since) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string_view name) {
    if (!name.empty() && seen.insert(std::string(name)).second) out.emplace_back(name);
  };
  // The whole repository but the run records ctx-run writes under <project>/.ctxkit/runs (they
  // would fill the list: every iteration adds files there).
  const std::string all = ":(top)", not_runs = ":(exclude).ctxkit/runs";
  if (!since.empty() && since.find_first_not_of("0123456789abcdef") == std::string::npos)
    if (auto d = run_git(dir, {"diff", "--name-only", since, "HEAD", "--", all, not_runs}))
      for (auto line : lines_of(*d)) add(line);
  if (auto s = run_git(dir, {"status", "--porcelain", "--untracked-files=all", "--", all, not_runs}))
    for (auto line : lines_of(*s))
      if (line.size() > 3) {
        std::string_view name = line.substr(3);
        if (auto arrow = name.find(" -> "); arrow != std::string_view::npos) name = name.substr(arrow + 4);
        add(name);
      }
  return out;
}

}  // namespace ctxkit::runner
