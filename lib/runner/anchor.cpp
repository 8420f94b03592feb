#include "runner/anchor.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "runner/git_snapshot.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/text.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxInstructionFile = 1u << 20;
constexpr size_t kTailBytes = 64u << 10;
}  // namespace

Result<AnchorSources> parse_anchor_sources(std::string_view list) {
  AnchorSources s{false, false, false, false, false, false, false};
  for (const std::string& name : util::split_list(list)) {
    if (name == "prompt")
      s.prompt = true;
    else if (name == "agent")
      s.agent = true;
    else if (name == "task")
      s.task = true;
    else if (name == "git")
      s.git = true;
    else if (name == "progress")
      s.progress = true;
    else if (name == "summary")
      s.summary = true;
    else if (name == "workflow")
      s.workflow = true;
    else
      return fail(fmt::format("unknown anchor source '{}' (known: prompt, agent, task, git, "
                              "progress, summary, workflow)",
                              name),
                  Error::Kind::Invalid);
  }
  return s;
}

std::optional<fs::path> project_file(const fs::path& project, const std::string& name,
                                     bool anywhere) {
  const fs::path path = project / name;
  if (anywhere) return path;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(project, ec), ec);
  if (ec) return std::nullopt;
  const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return std::nullopt;
  auto [r, f] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  if (r != root.end() || f == real.end()) return std::nullopt;  // not below the project
  return real;
}

std::string file_tail(const fs::path& file, size_t lines) {
  if (lines == 0) return {};
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {};
  }
  const off_t size = st.st_size;
  const off_t start =
      size > static_cast<off_t>(kTailBytes) ? size - static_cast<off_t>(kTailBytes) : 0;
  std::string text(static_cast<size_t>(size - start), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::pread(fd, text.data() + got, text.size() - got, start + static_cast<off_t>(got));
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  text.resize(got);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t pos = text.size(), count = 0;
  while (pos > 0) {
    size_t nl = text.rfind('\n', pos - 1);
    ++count;
    if (nl == std::string::npos) {
      pos = 0;
      break;
    }
    if (count == lines) {
      pos = nl + 1;
      break;
    }
    pos = nl;
  }
  return text.substr(pos);
}

std::string task_text(const workflow::TaskSpec& task) {
  std::string out = fmt::format("Task {}: {}\n", task.id, task.title);
  if (!task.description.empty())
    out += task.description + (task.description.ends_with('\n') ? "" : "\n");
  if (!task.acceptance.empty()) {
    out += "Acceptance criteria:\n";
    for (const auto& a : task.acceptance) out += fmt::format("- [ ] {}\n", a);
  }
  return out;
}

std::string build_runner_anchor(const AnchorInputs& in) {
  std::vector<AnchorSection> sections;
  const std::vector<std::string> default_files = {"PROMPT.md", "AGENT.md"};
  const auto& files = in.files.empty() ? default_files : in.files;
  for (const auto& name : files) {
    const bool is_default_prompt = in.files.empty() && name == "PROMPT.md";
    const bool is_default_agent = in.files.empty() && name == "AGENT.md";
    if ((is_default_prompt && !in.sources.prompt) || (is_default_agent && !in.sources.agent))
      continue;
    if (!in.files.empty() && !in.sources.prompt) continue;
    const auto file = project_file(in.project, name, in.files_anywhere);
    if (!file) continue;
    auto text = util::read_file(*file, {kMaxInstructionFile, true});
    if (!text || text->empty()) continue;
    sections.push_back({fmt::format("## Project instructions ({})", name), *text});
  }
  if (in.sources.task && in.include_task && !in.task.empty())
    sections.push_back({"## Current task", in.task});
  if (in.sources.workflow && !in.workflow.empty()) sections.push_back({"## Workflow", in.workflow});
  if (in.sources.git) {
    if (auto g = in.git_state ? *in.git_state : git_state(in.project); !g.empty())
      sections.push_back({"## Git state (when this session started)", g});
  }
  if (in.sources.progress && !in.progress_file.empty()) {
    const auto file = project_file(in.project, in.progress_file, in.progress_anywhere);
    if (auto t = file ? file_tail(*file, in.progress_lines) : std::string(); !t.empty())
      sections.push_back(
          {fmt::format("## Progress ({}, last {} lines)", in.progress_file, in.progress_lines), t});
  }
  if (in.sources.summary && !in.summary.empty())
    sections.push_back({"## Previous task summary", in.summary});
  if (sections.empty()) return {};
  return assemble_anchor("# Run context (ctx-run re-anchor)\n", sections, "", in.max_bytes);
}

}  // namespace ctxkit::runner
