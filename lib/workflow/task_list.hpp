#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::workflow {

// One task of a runner's tasks file.
struct TaskSpec {
  std::string id, title, description;
  std::vector<std::string> acceptance;  // acceptance criteria
  std::vector<std::string> depends_on;  // ids of tasks that come first
  bool done = false;  // a Markdown "- [x]" item (or YAML/JSON `done: true`): already done
  // The runner's keys for this task alone (YAML/JSON only; absent: the run's own).
  std::string context_mode;            // a context mode name (the runner checks it)
  int max_iterations = 0;              // calls of this task before on_fail (0: the run's)
  std::optional<uint64_t> max_tokens;  // a budget of this task's tokens (all four kinds)
  std::optional<double> max_cost_usd;  // a budget of this task's cost
};

enum class TaskListFormat { Yaml, Json, Markdown };

// The largest tasks file load_task_list reads.
inline constexpr uint64_t kMaxTaskListBytes = 16ull << 20;

// The format by extension (.yaml/.yml, .json, .md/.markdown, in any case), else by content: a
// first non-blank character '[' or '{' is JSON, a line starting (after blanks) "- [ ]"/"- [x]"
// (also "*" or "+", "[X]") is Markdown, else YAML.
TaskListFormat detect_task_list_format(const std::filesystem::path& file, std::string_view text);

// Parses a tasks file.
//
// YAML/JSON: a list of {id, title, description?, acceptance?[], depends_on?[], done?} or a map
// with a `tasks:` list of those; each may also carry the runner's context_mode (a string),
// max_iterations (1..10000), max_tokens (a whole number >= 0) and max_cost_usd (a number >= 0). A
// missing id is "task-N" (N: the task's 1-based place). Ids and depends_on entries may be numbers
// (taken as their text); other fields must be strings (in YAML any scalar but null and true/false),
// lists of strings, and `done` a boolean. Unknown keys are ignored.
//
// Markdown: every checklist item `- [ ] title` / `- [x] title` (also `*`, `+`, `[X]`) is a task,
// with ids task-1, task-2, … in order; items inside fenced code blocks are not. A checklist item
// indented deeper than the task before it is a sub-item: its text is appended to that task's
// acceptance criteria. The indented non-checklist lines that follow an item form its
// description (dedented; a line indented deeper than a sub-item continues that criterion).
// Any line that is not indented ends the description.
//
// Errors are one line: "name:line:col: task N ('id'): what" (line:col for YAML, where yaml-cpp
// gives it; "name: task N …" otherwise): missing title, non-string id, empty list, duplicate id,
// an id with characters outside [A-Za-z0-9._-], a field of the wrong type, a NUL byte (also one
// written as an escape, "\u0000" or "\0"), nesting deeper than the parser allows, a YAML document
// that expands (aliases counted each time they are used) past 1,000,000 nodes, 64 levels or 64 MiB.
[[nodiscard]] Result<std::vector<TaskSpec>> parse_task_list(std::string_view text,
                                                            TaskListFormat format,
                                                            std::string_view name);

// Reads (at most kMaxTaskListBytes, regular files only, never blocking on a FIFO) and parses a
// tasks file; the format from detect_task_list_format.
[[nodiscard]] Result<std::vector<TaskSpec>> load_task_list(const std::filesystem::path& file);

// Orders tasks so that each comes after every task it depends on, otherwise keeping file order:
// tasks are taken in file order, each preceded by those of its dependencies (in depends_on order,
// recursively) not placed yet. Already ordered input is returned unchanged. O(tasks + edges).
// Errors: an unknown id in depends_on ("task 'b' depends on unknown task 'x'"), a cycle
// ("a cycle in depends_on: a -> b -> a", each arrow reading "depends on"), a duplicate id.
[[nodiscard]] Result<std::vector<TaskSpec>> order_tasks(std::vector<TaskSpec> tasks);

}  // namespace ctxkit::workflow
