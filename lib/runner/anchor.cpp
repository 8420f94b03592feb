#include "runner/anchor.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "runner/git_snapshot.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "workflow/task_list.hpp"
#include "workflow/workflow_service.hpp"
#include "workflow/workflow_state.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxInstructionFile = 1u << 20;
constexpr size_t kTailBytes = 64u << 10;

std::string render(const AnchorSection& s) {
  return (s.heading.empty() ? "" : s.heading + "\n") + s.body +
         (s.body.ends_with('\n') ? "" : "\n");
}

}  // namespace

std::string bounded_text(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  auto boundary = [&](size_t cut) {
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return cut;
  };
  // The note takes at most 40 bytes; a smaller room gets the text cut without one.
  if (max <= 40) return std::string(text.substr(0, boundary(max)));
  const size_t cut = boundary(max - 40);
  return std::string(text.substr(0, cut)) +
         fmt::format("\n[... cut: {} more characters]", text.size() - cut);
}

std::string assemble_anchor(std::string_view head, const std::vector<AnchorSection>& sections,
                            std::string_view tail, size_t max_bytes) {
  std::vector<std::string> parts;
  parts.reserve(sections.size());
  for (const auto& s : sections)
    if (!s.body.empty()) parts.push_back(render(s));
  const size_t fixed = head.size() + tail.size();
  const size_t all = std::accumulate(parts.begin(), parts.end(), fixed,
                                     [](size_t n, const std::string& p) { return n + p.size(); });
  if (all > max_bytes) {
    // Max-min fair shares of what head and tail leave: the shortest parts keep everything,
    // the longer ones split the rest evenly.
    size_t room = max_bytes > fixed ? max_bytes - fixed : 0;
    std::vector<size_t> order(parts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return parts[a].size() < parts[b].size(); });
    std::vector<size_t> share(parts.size(), 0);
    size_t left = order.size();
    for (size_t i : order) {
      const size_t fair = left ? room / left : 0;
      share[i] = std::min(parts[i].size(), fair);
      room -= share[i];
      --left;
    }
    for (size_t i = 0; i < parts.size(); ++i) parts[i] = bounded_text(parts[i], share[i]);
  }
  std::string out(head);
  for (const auto& p : parts) out += p;
  out += tail;
  return out;
}

Result<AnchorSources> parse_anchor_sources(std::string_view list) {
  AnchorSources s{false, false, false, false, false, false, false};
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
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
    else if (!name.empty())
      return fail(fmt::format("unknown anchor source '{}' (known: prompt, agent, task, git, "
                              "progress, summary, workflow)",
                              name),
                  Error::Kind::Invalid);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
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

std::vector<AnchorSection> workflow_sections(const workflow::WorkflowMachine& m) {
  const auto& tmpl = m.workflow();
  std::string line = fmt::format("Current step: {} ({} of {})", m.step_id(),
                                 tmpl.step_index(m.step_id()) + 1, tmpl.steps.size());
  if (const auto* sub = m.current_loop_step()) {
    const auto* subs = tmpl.loop(m.step_id());
    size_t idx = 0;
    for (size_t i = 0; subs && i < subs->size(); ++i)
      if ((*subs)[i].id == sub->id) idx = i;
    line += fmt::format(", sub-step {} ({} of {})", sub->id, idx + 1, subs ? subs->size() : 0);
  }
  const auto task = m.task();
  if (task.is_object()) {
    const auto& tasks = m.state()["tasks"];
    size_t total = tasks.contains(m.step_id()) ? tasks[m.step_id()].size() : 0;
    line += fmt::format(", task {}: {} ({} of {})", task["id"].get<std::string>(),
                        task["title"].get<std::string>(), task["index"].get<long>() + 1, total);
  }
  if (auto it = m.ralph_iteration())
    line += fmt::format(", iteration {} of {}", *it, m.current_step().n);
  std::vector<AnchorSection> out;
  std::string position;
  if (auto s = m.summary()) position += fmt::format("Request: {}\n", *s);
  position += line;
  out.push_back({"", position});
  out.push_back({"Step instructions:", m.instructions()});
  if (auto last = m.latest_output())
    out.push_back({fmt::format("Latest handoff ({}):", last->first), last->second});
  return out;
}

std::string workflow_reanchor(const fs::path& worktree, std::string_view source, int max_tokens) {
  auto text = workflow::read_state_text(worktree);
  if (!text || !*text) return {};
  auto m = workflow::WorkflowMachine::from_state_text(**text, nullptr);
  if (!m || m->state_status() != "running") return {};
  const size_t budget = static_cast<size_t>(std::max(max_tokens, 100)) * 4;
  const std::string head = fmt::format(
      "Workflow \"{}\" is in progress in {} (context was {}ed; the workflow state is unchanged).\n",
      m->workflow().name, worktree.string(), source == "clear" ? "clear" : "compact");
  const std::string tail =
      "When this step is done, call workflow_advance with a summary of what was done (or run "
      "`ctx-workflow advance --output "
      "...`); workflow_status gives these instructions again.";
  return bounded_text(assemble_anchor(head, workflow_sections(*m), tail, budget), budget);
}

}  // namespace ctxkit::runner
