#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "workflow/reanchor.hpp"

namespace ctxkit::workflow {
struct TaskSpec;
}  // namespace ctxkit::workflow

namespace ctxkit::runner {

// The runner's anchor (`ctx-run`): the project's files, the task, the workflow's position, git
// and the progress file, assembled within a byte budget by workflow/reanchor.
using workflow::AnchorSection;
using workflow::assemble_anchor;
using workflow::bounded_text;
using workflow::workflow_sections;

// Which sources the runner's anchor takes (--anchor-sources
// prompt,agent,task,git,progress,summary).
struct AnchorSources {
  bool prompt = true, agent = true, task = true, git = true, progress = true, summary = true,
       workflow = true;
};
// Parses a comma-separated list; an unknown name is an error naming it and the known ones.
[[nodiscard]] Result<AnchorSources> parse_anchor_sources(std::string_view list);

// The file `name` names (relative to `project`, or absolute): as it is with `anywhere`; otherwise
// only when it resolves (links followed) to a path inside the project, else nullopt.
std::optional<std::filesystem::path> project_file(const std::filesystem::path& project,
                                                  const std::string& name, bool anywhere);

// The last `lines` lines of `file` (a regular file, at most the last 64 KiB read); empty when
// missing.
std::string file_tail(const std::filesystem::path& file, size_t lines);
// A task as the anchor and the prompts show it: id, title, description, acceptance criteria as
// a checklist.
std::string task_text(const workflow::TaskSpec& task);

// What the runner's anchor is made of.
struct AnchorInputs {
  std::filesystem::path project;
  // Project instruction files (relative to project): default PROMPT.md then AGENT.md.
  std::vector<std::string> files;
  bool include_task = true;
  std::string task;           // task_text() of the current task, or empty
  std::string workflow;       // the workflow position and instructions, or empty
  std::string progress_file;  // relative to project
  size_t progress_lines = 20;
  // Whether `files` / `progress_file` may name files outside the project (the user's own
  // configuration named them); otherwise a file that resolves outside the project is not read.
  bool files_anywhere = false;
  bool progress_anywhere = false;
  std::string summary;  // hybrid: the previous task's summary, or empty
  // The git section (render_git_state) when the caller has it; otherwise git is asked now.
  std::optional<std::string> git_state;
  AnchorSources sources;
  size_t max_bytes = 16000;
};
// Gathers and assembles the runner's anchor (files read now; git asked now unless given).
std::string build_runner_anchor(const AnchorInputs& in);

// The anchor's size in tokens, as the runner reports it: an estimate, UTF-8 bytes / 4 rounded up.
inline size_t estimate_tokens(size_t bytes) {
  return (bytes + 3) / 4;
}

}  // namespace ctxkit::runner
