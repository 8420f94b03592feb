#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::workflow {

// The answer to one tool call: the text content (JSON text shaped as the reference
// implementation shapes it: pretty-printed status/context answers, compact set_tasks and error
// answers) and whether it is an error (MCP `isError`).
struct ToolOutcome {
  std::string text;
  bool is_error = false;
};

// Something that happened to a step's context action, for the event log.
struct WorkflowEvent {
  std::string kind;    // "handed_out", "skipped", "confirmed"
  std::string action;  // "compact", "clear"
  std::string workflow, step, sub_step, task_id;
  long iteration = 0;                 // ralph iteration, 0 outside ralph steps
  std::optional<double> percent;      // the context figure used by context_min_percent
  std::optional<double> min_percent;  // the threshold that applied
  // Who: "workflow_start", "workflow_advance", "ctx-gate", "ctx-run", "session-start:<id>".
  std::string by;
  std::string focus;  // a compact's focus text
};

// The text of an error answer: {"error":"<message>"}, as the reference writes it.
std::string error_text(const std::string& message);

// Where a service finds its state and its workflow.
struct ServiceOptions {
  // The worktree whose `workflow-state.json` the service reads and writes.
  std::filesystem::path worktree;
  // The workflow to start: a name from the search path or a file path. Empty: none, and then
  // workflow_start must name one (its `workflow` argument) unless a state already exists.
  std::string workflow;
  // The project root searched for `.lanes/workflows` and `.ctxkit/workflows` (default: the
  // worktree).
  std::filesystem::path repo_root;
  // The template search path, lowest precedence first. Empty: default_search_dirs().
  std::vector<std::filesystem::path> search_dirs;
  // The environment (HOME, XDG_CONFIG_HOME, CLAUDE_CODE_SESSION_ID, ...).
  util::Env env;
  // The session's context use in percent of the usable window, for `context_min_percent`;
  // nullopt when unknown. Unset: ctxkit's meter on the session named by
  // CLAUDE_CODE_SESSION_ID.
  std::function<std::optional<double>()> context_percent;
  // Called for each action handed out or skipped, after the state is saved (optional; errors
  // are the callee's).
  std::function<void(const WorkflowEvent&)> on_event;
  // A supervisor (ctx-rollover --supervise) carries out handed-out actions at the end of the
  // turn: the answer's message tells the model to end its turn instead of typing the command.
  bool supervised = false;
};

// What workflow_start is asked to start.
struct StartRequest {
  // A name from the search path or a file path; empty: the configured one (ServiceOptions).
  // Named, it replaces a state that is no longer running.
  std::string workflow;
  // The user's request in a few words, kept with a new state (cut as the reference cuts it).
  std::optional<std::string> summary;
};

// The workflow after an operation, and what the pre-step gate said at its position.
struct WorkflowAnswer {
  // The state the operation left (never null; shared with the service, never changed).
  std::shared_ptr<const WorkflowMachine> machine;
  // start, advance, take_gate: the action handed out (`gate.action`) or skipped
  // (`gate.skipped`), already marked, saved and recorded. status: the action that would be
  // handed out now, nothing marked.
  GateDecision gate;
};

// What confirm() found: the state as it is now, and whether the action was the position's.
struct Confirmation {
  // The state (never null; shared with the service, never changed).
  std::shared_ptr<const WorkflowMachine> machine;
  // The action carried out is the one the position declares: it is marked and confirmed.
  bool confirmed = false;
  // Why its mark could not be saved (the file keeps the action unmarked); nullopt when it was
  // saved or was marked already.
  std::optional<std::string> unsaved;
};

// The workflow tools of the reference implementation's `lanes-workflow` MCP server
// (workflow_start, workflow_set_tasks, workflow_status, workflow_advance, workflow_context),
// plus workflow_list and the optional `workflow` argument of workflow_start. Each operation
// reloads the state file, so several processes (the MCP server, ctx-workflow, ctx-gate, ctx-run)
// can share one worktree, and a restart loses nothing; an operation that may save holds the
// state's lock (lock_state) from its read to its save. The typed operations give the state and
// the gate's decision, or an error whose message is the reference's text; call() is the MCP
// adapter over them. Nothing throws.
//
// The gate ("decide, mark as handed out, save, record the event") has one path, taken by start,
// advance and take_gate: a pending context action of the position is decided (the
// `context_min_percent` figure read only when the step has one), marked as handed out or
// skipped, the state saved, and then `on_event` called once with the event. confirm() takes
// the same steps (mark, save, record) for an action carried out without the gate deciding it.
class WorkflowService {
 public:
  explicit WorkflowService(ServiceOptions options);

  // Starts the workflow, or continues the one whose state exists (a named workflow replaces a
  // state that is no longer running), and takes the gate of the first position. A state file
  // that does not load is an error: nothing is started over it.
  [[nodiscard]] Result<WorkflowAnswer> start(const StartRequest& request);
  // Sets the tasks of loop step `loop_id`; gives how many were set. Errors: no state, an empty
  // loop id, a task without id or title, a loop id that is not the current loop step's.
  [[nodiscard]] Result<size_t> set_tasks(const std::string& loop_id,
                                         const std::vector<TaskInput>& tasks);
  // The current position and the action the gate would hand out now (nothing saved).
  [[nodiscard]] Result<WorkflowAnswer> status();
  // Records `output` for the current step, moves on, saves, then takes the gate of the new
  // position.
  [[nodiscard]] Result<WorkflowAnswer> advance(const std::string& output);
  // Takes the gate of the current position (an action not handed out yet: after set_tasks, or a
  // state another client left), as ctx-gate and ctx-run do; `by` names the taker in the event.
  // nullopt when there is no state file (then no lock is taken); a state that is not running is
  // given back untouched.
  [[nodiscard]] Result<std::optional<WorkflowAnswer>> take_gate(std::string_view by);
  // The context action `done` was carried out in a session (the SessionStart hook after /clear
  // or /compact; `by` names it in the event). When it is the action the running position
  // declares, it is marked as carried out (and saved, unless it was marked already) and then
  // one "confirmed" event recorded: the action happened, so the event is recorded even when the
  // mark could not be saved (`unsaved` says why). nullopt when there is no state file (then no
  // lock is taken); a state that is not running, or whose position declares another action, is
  // given back untouched.
  [[nodiscard]] Result<std::optional<Confirmation>> confirm(ContextAction done,
                                                            std::string_view by);

  // The MCP adapter: runs tool `tool` with `arguments` (a JSON object; null counts as {}) and
  // renders the reference's answer. A pending context action is answered as
  // {"contextAction":"/compact"|"/clear","message":…}. Bad arguments, calls out of order and
  // unreadable files give `is_error` with one clear text.
  ToolOutcome call(std::string_view tool, const nlohmann::json& arguments);

  // The MCP tools/list entries: [{name, description, inputSchema}, ...].
  static nlohmann::json tools();

  // The short text for the MCP initialize result's `instructions`.
  static std::string instructions();

  const ServiceOptions& options() const { return opts_; }

  // The state as the last call left it, with the version of the file it came from or went to:
  // a call whose file is still that version skips reading and parsing it.
  struct Cache;

 private:
  // An argument error of a call that may save, reported as the call would: after the lock's
  // error and, with `after_state`, after the state's (unreadable, not started).
  ToolOutcome refused(const std::string& message, bool after_state);

  ServiceOptions opts_;
  std::shared_ptr<Cache> cache_;
};

// The default template search path, lowest precedence first: <prefix>/share/ctxkit/workflows
// (beside the running program), ~/.config/ctxkit/workflows, <project>/.lanes/workflows,
// <project>/.ctxkit/workflows.
std::vector<std::filesystem::path> default_search_dirs(const util::Env& env,
                                                       const std::filesystem::path& project);

// The event describing a gate decision (handed out or skipped) at `machine`'s position.
WorkflowEvent event_for(const WorkflowMachine& machine, const GateDecision& decision,
                        std::string by);

// The largest state file that is read (and so the largest that is written: a save that would
// pass it is refused, the file keeping its last state).
inline constexpr uint64_t kMaxStateBytes = 64ull << 20;

// The state file of a worktree: <worktree>/workflow-state.json.
std::filesystem::path state_path(const std::filesystem::path& worktree);
// The state file's text, nullopt when there is none; never blocks on a FIFO. An error names the
// file.
[[nodiscard]] Result<std::optional<std::string>> read_state_text(
    const std::filesystem::path& worktree);
// Replaces the state file atomically with `machine`'s state; refuses a state larger than
// kMaxStateBytes and a state file that is a symbolic link (read_state_text refuses it too). A
// new file gets 0666 less the umask, an existing one keeps its mode.
[[nodiscard]] Result<void> save_state(const std::filesystem::path& worktree,
                                      const WorkflowMachine& machine);
// The lock every writer of a worktree's state holds from reading the state to saving it (a flock
// on the worktree directory itself: nothing is created in it), so that two servers, or a server
// and ctx-workflow / ctx-gate / ctx-run, never save over each other's change. Waits up to 10 s.
[[nodiscard]] Result<util::FileLock> lock_state(const std::filesystem::path& worktree);

// One version of a file: a replacement (another inode) or an edit in place (size, times) is
// another version.
struct FileVersion {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileVersion&) const = default;
};
std::optional<FileVersion> file_version(const std::filesystem::path& path);
// save_state, telling which version of the file it wrote (nullopt when another writer replaced
// it at once).
[[nodiscard]] Result<std::optional<FileVersion>> save_state_versioned(
    const std::filesystem::path& worktree, const WorkflowMachine& machine);

}  // namespace ctxkit::workflow
