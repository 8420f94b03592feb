#include "workflow/workflow_service.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "workflow/js_compat.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/workflow_catalog.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

namespace {
constexpr const char* kNotStarted = "Workflow not started. Call workflow_start first.";

ToolOutcome error_outcome(const std::string& message) {
  return {error_text(message), true};
}

ToolOutcome pretty(const ojson& body) {
  return {js::stringify(body, 2), false};
}

ojson action_answer(ContextAction action, const WorkflowMachine& m, bool supervised) {
  const std::string command = command_of(action);
  ojson body = ojson::object();
  body["contextAction"] = command;
  body["message"] =
      supervised
          ? fmt::format(
                "ctxkit's supervisor runs `{}` when this turn ends: end your turn now, without "
                "calling more tools; the next session continues with this step's instructions.",
                command)
          : fmt::format("Please run `{}` first, then call workflow_status again.", command);
  // ctxkit extension: a focus the template asked for (templates without compact_focus get the
  // reference implementation's answer unchanged).
  if (action == ContextAction::Compact) {
    const auto* sub = m.current_loop_step();
    if ((sub && sub->compact_focus) || m.current_step().compact_focus)
      body["focus"] = compact_focus(m);
  }
  return body;
}

// The outcome of loading the state file: no file, a machine, or an error.
struct Loaded {
  std::optional<WorkflowMachine> machine;
  std::optional<std::string> error;
};
}  // namespace

std::string error_text(const std::string& message) {
  ojson body = ojson::object();
  body["error"] = message;
  return js::stringify(body, 0);
}

fs::path state_path(const fs::path& worktree) {
  return worktree / "workflow-state.json";
}

namespace {
std::string link_refusal(const fs::path& p) {
  return fmt::format(
      "{} is a symbolic link: the workflow state is neither read nor written through one (put the "
      "file itself there)",
      p.string());
}

// The mode a save gives the state file: its own when it exists, else what any program would
// create it with under the user's umask (as Lanes's writeFile does). A link is refused: replacing
// it would silently turn it into a file, writing through it would write elsewhere.
Result<unsigned> state_mode(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return util::umask_mode(0666);
  if (S_ISLNK(st.st_mode)) return fail("not saved: " + link_refusal(path), Error::Kind::Invalid);
  if (!S_ISREG(st.st_mode))
    return fail(fmt::format("not saved: {} is not a regular file", path.string()),
                Error::Kind::Invalid);
  return static_cast<unsigned>(st.st_mode & 07777);
}
}  // namespace

Result<std::optional<std::string>> read_state_text(const fs::path& worktree) {
  const fs::path p = state_path(worktree);
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
  } else if (S_ISLNK(st.st_mode)) {
    return fail(link_refusal(p), Error::Kind::Invalid);
  }
  auto text = util::read_file(p, {kMaxStateBytes, false});
  if (!text)
    return fail(
        fmt::format("{}: cannot read the workflow state ({})", p.string(), text.error().message));
  return std::optional<std::string>(std::move(*text));
}

namespace {
// The state's text, unless it is too large to be read again.
Result<std::string> state_text(const fs::path& worktree, const WorkflowMachine& machine) {
  std::string text = machine.serialize();
  if (text.size() > kMaxStateBytes)
    return fail(fmt::format("{}: not saved: the workflow state would be {} bytes, more than the {} "
                            "MiB a state file may hold "
                            "(it keeps its last state)",
                            state_path(worktree).string(), text.size(), kMaxStateBytes >> 20),
                Error::Kind::Invalid);
  return text;
}
}  // namespace

Result<void> save_state(const fs::path& worktree, const WorkflowMachine& machine) {
  auto text = state_text(worktree, machine);
  if (!text) return std::unexpected(text.error());
  auto mode = state_mode(state_path(worktree));
  if (!mode) return std::unexpected(mode.error());
  return util::write_file_atomic(state_path(worktree), *text, *mode, util::Durability::Flush);
}

Result<util::FileLock> lock_state(const fs::path& worktree) {
  auto lock = util::FileLock::acquire_directory(worktree, std::chrono::seconds(10));
  if (!lock)
    return fail(fmt::format("the workflow state's lock: {}", lock.error().message),
                lock.error().kind);
  return std::move(*lock);
}

std::optional<FileVersion> file_version(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  auto ns = [](const timespec& t) {
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  return FileVersion{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim)};
}

Result<std::optional<FileVersion>> save_state_versioned(const fs::path& worktree,
                                                        const WorkflowMachine& machine) {
  const fs::path path = state_path(worktree);
  auto state = state_text(worktree, machine);
  if (!state) return std::unexpected(state.error());
  const std::string& text = *state;
  auto mode = state_mode(path);
  if (!mode) return std::unexpected(mode.error());
  auto file = util::AtomicFile::create(path, *mode);
  if (!file) return std::unexpected(file.error());
  file->write(text);
  // The temporary file keeps its inode through the rename: the file found under the final name
  // afterwards is ours only if it has that inode and still our size (an edit in place by another
  // program right after the rename would otherwise be taken for ours).
  const auto ours = file_version(file->temp_path());
  if (auto r = file->commit(util::Durability::Flush); !r) return std::unexpected(r.error());
  auto now = file_version(path);
  if (!ours || !now || now->inode != ours->inode || now->device != ours->device ||
      now->size != text.size())
    return std::optional<FileVersion>();
  return now;
}

struct WorkflowService::Cache {
  std::optional<FileVersion> version;
  std::shared_ptr<WorkflowMachine> machine;
  // The status answer rendered from `machine` (it depends on nothing else), once one was.
  std::optional<std::string> status_text;

  // Another state, and nothing rendered from it yet.
  void keep(std::shared_ptr<WorkflowMachine> m, const FileVersion& v) {
    forget();
    machine = std::move(m);
    version = v;
  }
  void forget() {
    version.reset();
    machine.reset();
    status_text.reset();
  }
};

namespace {
// An event of kind `kind` for `action` at `m`'s position, by `by`.
WorkflowEvent event_at(const WorkflowMachine& m, std::string kind, ContextAction action,
                       std::string by) {
  WorkflowEvent e;
  e.kind = std::move(kind);
  e.action = to_string(action);
  e.workflow = m.workflow().name;
  e.step = m.step_id();
  if (const auto* sub = m.current_loop_step()) e.sub_step = sub->id;
  const auto task = m.task();
  if (task.is_object()) e.task_id = task["id"].get<std::string>();
  e.iteration = m.ralph_iteration().value_or(0);
  e.by = std::move(by);
  return e;
}
}  // namespace

WorkflowEvent event_for(const WorkflowMachine& m, const GateDecision& d, std::string by) {
  const bool handed_out = d.action != ContextAction::None;
  WorkflowEvent e = event_at(m, handed_out ? "handed_out" : "skipped",
                             handed_out ? d.action : d.skipped, std::move(by));
  e.percent = d.percent;
  e.min_percent = d.min_percent;
  e.focus = d.focus;
  return e;
}

std::vector<fs::path> default_search_dirs(const util::Env& env, const fs::path& project) {
  std::vector<fs::path> dirs;
  if (auto share = env.get_nonempty("CTXKIT_SHARE_DIR"))
    dirs.push_back(fs::path(*share) / "workflows");
  else if (auto exe = util::executable_dir())
    dirs.push_back(exe->parent_path() / "share" / "ctxkit" / "workflows");
  dirs.push_back(core::Locations::resolve(env).workflows_dir());
  if (!project.empty()) {
    dirs.push_back(project / ".lanes" / "workflows");
    dirs.push_back(project / ".ctxkit" / "workflows");
  }
  return dirs;
}

WorkflowService::WorkflowService(ServiceOptions options)
    : opts_(std::move(options)), cache_(std::make_shared<Cache>()) {
  if (opts_.repo_root.empty()) opts_.repo_root = opts_.worktree;
  if (opts_.search_dirs.empty())
    opts_.search_dirs = default_search_dirs(opts_.env, opts_.repo_root);
  if (!opts_.context_percent) {
    const util::Env env = opts_.env;
    const fs::path project = opts_.repo_root;
    opts_.context_percent = [env, project]() -> std::optional<double> {
      auto session = env.get_nonempty("CLAUDE_CODE_SESSION_ID");
      if (!session) return std::nullopt;
      const core::Config cfg = core::load_config(env, {project});
      return context::session_percent(*session, env, cfg.locations(env), cfg.context);
    };
  }
}

namespace {
constexpr const char* kLoopIdError = "loop_id must be a non-empty string";

// What workflow_set_tasks says of a task without an id or a title.
std::optional<std::string> task_error(const TaskInput& task) {
  if (task.id.empty()) return "Each task must have a non-empty id string";
  if (task.title.empty()) return "Each task must have a non-empty title string";
  return std::nullopt;
}

class Call {
 public:
  Call(const ServiceOptions& o, WorkflowService::Cache& cache) : o_(o), cache_(cache) {}

  // `to_change`: the caller changes the state and saves it (which caches it again), so the
  // cached state is handed over instead of copied when nobody else holds it.
  Loaded load(bool to_change = false) const {
    Loaded out;
    const fs::path p = state_path(o_.worktree);
    // The file as this service last read or wrote it: its parsed state is at hand.
    const auto before = file_version(p);
    if (before && cache_.version == before && cache_.machine) {
      if (to_change && cache_.machine.use_count() == 1) {
        out.machine.emplace(std::move(*cache_.machine));
        forget();
      } else {
        out.machine.emplace(*cache_.machine);
        if (to_change) forget();
      }
      return out;
    }
    out = read_and_parse(p);
    // Kept only when nothing changed the file while it was read.
    forget();
    if (!to_change && out.machine && before && file_version(p) == before)
      cache_.keep(std::make_shared<WorkflowMachine>(*out.machine), *before);
    return out;
  }

  // For a call that only reads the state: the cached state itself while the file is still the
  // version it came from (no copy of it), else the file read and parsed (and cached).
  struct Reading {
    std::shared_ptr<const WorkflowMachine> machine;
    std::optional<std::string> error;
  };
  Reading read_only() const {
    Reading out;
    const fs::path p = state_path(o_.worktree);
    const auto before = file_version(p);
    if (!(before && cache_.version == before && cache_.machine)) {
      Loaded read = read_and_parse(p);
      forget();
      out.error = std::move(read.error);
      if (!read.machine) return out;
      auto machine = std::make_shared<WorkflowMachine>(std::move(*read.machine));
      out.machine = machine;
      if (!before || file_version(p) != before) return out;
      cache_.keep(std::move(machine), *before);
      return out;
    }
    out.machine = cache_.machine;
    return out;
  }

  void forget() const {
    cache_.forget();
    saved_from_ = nullptr;
    saved_version_.reset();
  }

  Loaded read_and_parse(const fs::path& p) const {
    Loaded out;
    auto read = read_state_text(o_.worktree);
    if (!read) {
      out.error = read.error().message;
      return out;
    }
    if (!*read) return out;
    const std::string text = std::move(**read);
    auto m = WorkflowMachine::from_state_text(text, nullptr);
    if (!m) {
      // A state without its own workflow_definition (older files) resumes with the configured
      // template.
      if (!o_.workflow.empty()) {
        if (auto t = template_for(o_.workflow)) {
          auto m2 = WorkflowMachine::from_state_text(text, &*t);
          if (m2) {
            out.machine.emplace(std::move(*m2));
            return out;
          }
        }
      }
      out.error = fmt::format("{}: {}", p.string(), m.error().message);
      return out;
    }
    out.machine.emplace(std::move(*m));
    return out;
  }

  Result<WorkflowTemplate> template_for(const std::string& spec) const {
    auto path = resolve_workflow(spec, o_.search_dirs);
    if (!path) return std::unexpected(path.error());
    return load_workflow_file(*path);
  }

  // Saves `m`. The file it wrote is remembered with `m`, which the call hands over when it ends
  // (keep): cached then, without a copy, if it has not changed since.
  std::optional<std::string> save(const WorkflowMachine& m) const {
    auto w = save_state_versioned(o_.worktree, m);
    forget();
    if (!w) return w.error().message;
    if (*w) {
      saved_from_ = &m;
      saved_revision_ = m.revision();
      saved_version_ = **w;
    }
    return std::nullopt;
  }

  // The state an operation leaves, `m`, for its answer; also the cached state when it is the
  // state this call saved last and has not changed since.
  std::shared_ptr<const WorkflowMachine> keep(WorkflowMachine&& m) const {
    const bool as_saved = saved_version_ && saved_from_ == &m && saved_revision_ == m.revision();
    const std::optional<FileVersion> version = saved_version_;
    auto kept = std::make_shared<WorkflowMachine>(std::move(m));
    saved_from_ = nullptr;
    saved_version_.reset();
    if (as_saved) cache_.keep(kept, *version);
    return kept;
  }

  // What the gate says at `m`'s position (the context figure read only when it counts).
  GateDecision decide(const WorkflowMachine& m) const {
    if (m.pending_action() == ContextAction::None) return {};
    return decide_gate(m, gate_needs_percent(m) ? o_.context_percent() : std::nullopt);
  }

  // The one gate path: decides; an action handed out or skipped is marked, the state saved,
  // and then the event recorded (once, after the save). `changed`: the caller changed the state
  // too (under the same lock), and this one save is its save as well: a state is written once a
  // call (a save is a rename, most of a call's time).
  Result<GateDecision> gate(WorkflowMachine& m, std::string_view by, bool changed = false) const {
    const GateDecision d = decide(m);
    const bool acts = d.action != ContextAction::None || d.skipped != ContextAction::None;
    if (acts) m.mark_action_executed();
    if (acts || changed) {
      if (auto e = save(m)) return fail(*e);
    }
    if (acts) record(event_for(m, d, std::string(by)));
    return d;
  }

  // The position's action marked as carried out and the state saved; why it could not be saved.
  std::optional<std::string> mark(WorkflowMachine& m) const {
    m.mark_action_executed();
    return save(m);
  }
  void record(const WorkflowEvent& e) const {
    if (o_.on_event) o_.on_event(e);
  }

  WorkflowAnswer answer(WorkflowMachine&& m, const GateDecision& d) const {
    return {keep(std::move(m)), d};
  }

  Result<WorkflowAnswer> start(const StartRequest& request) const {
    auto loaded = load();
    // A state file that does not load is an error whatever the call names: starting over would
    // replace it, and the outputs in it would be gone.
    if (loaded.error)
      return fail(*loaded.error +
                  " (nothing was started: fix or remove the file to start a workflow)");
    bool dirty = false;
    std::optional<WorkflowMachine> m;
    if (loaded.machine &&
        !(!request.workflow.empty() && loaded.machine->state_status() != "running")) {
      m = std::move(loaded.machine);
    } else {
      const std::string spec = request.workflow.empty() ? o_.workflow : request.workflow;
      if (spec.empty())
        return fail(
            "No workflow to start: pass `workflow` (a name from workflow_list or a path to a "
            "template)");
      auto t = template_for(spec);
      if (!t) return std::unexpected(t.error());
      m.emplace(WorkflowMachine::start(std::move(*t)));
      if (request.summary)
        if (auto s = start_summary(*request.summary)) m->set_summary(*s);
      dirty = true;
    }
    auto d = gate(*m, "workflow_start", dirty);
    if (!d) return std::unexpected(d.error());
    return answer(std::move(*m), *d);
  }

  Result<size_t> set_tasks(const std::string& loop_id, const std::vector<TaskInput>& tasks) const {
    auto loaded = load(true);
    if (loaded.error) return fail(*loaded.error);
    if (!loaded.machine) return fail(kNotStarted);
    if (loop_id.empty()) return fail(kLoopIdError);
    for (const auto& t : tasks)
      if (auto e = task_error(t)) return fail(*e);
    auto& m = *loaded.machine;
    if (auto r = m.set_tasks(loop_id, tasks); !r) return std::unexpected(r.error());
    if (auto e = save(m)) return fail(*e);
    keep(std::move(m));
    return tasks.size();
  }

  Result<WorkflowAnswer> status() const {
    auto loaded = read_only();
    if (loaded.error) return fail(*loaded.error);
    if (!loaded.machine) return fail(kNotStarted);
    const GateDecision d = decide(*loaded.machine);
    return WorkflowAnswer{std::move(loaded.machine), d};
  }

  Result<WorkflowAnswer> advance(const std::string& output) const {
    auto loaded = load(true);
    if (loaded.error) return fail(*loaded.error);
    if (!loaded.machine) return fail(kNotStarted);
    auto& m = *loaded.machine;
    m.advance(output);
    auto d = gate(m, "workflow_advance", true);
    if (!d) return std::unexpected(d.error());
    return answer(std::move(m), *d);
  }

  Result<std::optional<WorkflowAnswer>> take_gate(std::string_view by) const {
    auto loaded = load(true);
    if (loaded.error) return fail(*loaded.error);
    if (!loaded.machine) return std::optional<WorkflowAnswer>();
    auto& m = *loaded.machine;
    GateDecision d;
    if (m.state_status() == "running") {
      auto taken = gate(m, by);
      if (!taken) return std::unexpected(taken.error());
      d = *taken;
    }
    return std::optional<WorkflowAnswer>(answer(std::move(m), d));
  }

  Result<std::optional<Confirmation>> confirm(ContextAction done, std::string_view by) const {
    auto loaded = load(true);
    if (loaded.error) return fail(*loaded.error);
    if (!loaded.machine) return std::optional<Confirmation>();
    auto& m = *loaded.machine;
    Confirmation c;
    if (m.state_status() == "running" && done != ContextAction::None &&
        m.declared_action() == done) {
      c.confirmed = true;
      if (!m.action_executed()) c.unsaved = mark(m);  // done before anyone asked for it
      record(event_at(m, "confirmed", done, std::string(by)));
    }
    c.machine = keep(std::move(m));
    return std::optional<Confirmation>(std::move(c));
  }

  ToolOutcome context() const {
    const auto loaded = read_only();
    if (loaded.error) return error_outcome(*loaded.error);
    if (!loaded.machine) return error_outcome(kNotStarted);
    return pretty(loaded.machine->context());
  }

  ToolOutcome list() const {
    ojson arr = ojson::array();
    for (const auto& e : list_workflows(o_.search_dirs)) {
      ojson item = ojson::object();
      item["name"] = e.name;
      item["description"] = e.description;
      item["path"] = e.path.string();
      if (!e.error.empty()) item["error"] = e.error;
      arr.push_back(std::move(item));
    }
    ojson body = ojson::object();
    body["workflows"] = std::move(arr);
    ojson dirs = ojson::array();
    for (const auto& d : o_.search_dirs) dirs.push_back(d.string());
    body["searchPath"] = std::move(dirs);
    return pretty(body);
  }

 private:
  const ServiceOptions& o_;
  WorkflowService::Cache& cache_;
  // The machine this call saved last, its revision then and the file it wrote.
  mutable const WorkflowMachine* saved_from_ = nullptr;
  mutable uint64_t saved_revision_ = 0;
  mutable std::optional<FileVersion> saved_version_;
};

// Runs `op`, a typed operation; an exception becomes its error.
template <typename Op>
auto guarded(Op op) -> decltype(op()) {
  try {
    return op();
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

// The arguments of workflow_set_tasks, checked in the reference's order.
struct SetTasksArgs {
  std::string loop_id;
  std::vector<TaskInput> tasks;
};
Result<SetTasksArgs> parse_set_tasks(const json& args) {
  SetTasksArgs out;
  if (!args.contains("loop_id") || !args["loop_id"].is_string() ||
      args["loop_id"].get<std::string>().empty())
    return fail(kLoopIdError);
  out.loop_id = args["loop_id"].get<std::string>();
  if (!args.contains("tasks") || !args["tasks"].is_array()) return fail("tasks must be an array");
  auto text = [](const json& t, const char* key) {
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string();
  };
  for (const auto& t : args["tasks"]) {
    if (!t.is_object() && !t.is_array()) return fail("Each task must be an object");
    TaskInput in;
    if (t.is_object()) {
      in.id = text(t, "id");
      in.title = text(t, "title");
      if (t.contains("description") && t["description"].is_string())
        in.description = t["description"].get<std::string>();
    }
    if (auto e = task_error(in)) return fail(*e);
    out.tasks.push_back(std::move(in));
  }
  return out;
}

// The state's lock when there is a state file: without one nothing is saved, and the worktree
// may not exist (no lock is taken).
Result<std::optional<util::FileLock>> lock_if_state(const fs::path& worktree) {
  std::error_code ec;
  if (fs::symlink_status(state_path(worktree), ec).type() == fs::file_type::not_found)
    return std::optional<util::FileLock>();
  auto l = lock_state(worktree);
  if (!l) return fail(l.error().message);
  return std::optional<util::FileLock>(std::move(*l));
}

// A start, status or advance answer: the action handed out, else the status with its reminder
// (rendered once per cached state: a status call on a state that has not changed since the last
// call rendered it gives the same text again).
ToolOutcome render(const WorkflowAnswer& a, bool supervised, WorkflowService::Cache& cache) {
  if (a.gate.action != ContextAction::None)
    return pretty(action_answer(a.gate.action, *a.machine, supervised));
  const bool cached = cache.machine && a.machine.get() == cache.machine.get();
  if (cached && cache.status_text) return {*cache.status_text, false};
  ToolOutcome out{a.machine->status_text(true), false};
  if (cached) cache.status_text = out.text;
  return out;
}
}  // namespace

Result<WorkflowAnswer> WorkflowService::start(const StartRequest& request) {
  return guarded([&]() -> Result<WorkflowAnswer> {
    auto lock = lock_state(opts_.worktree);
    if (!lock) return fail(lock.error().message);
    return Call(opts_, *cache_).start(request);
  });
}

Result<size_t> WorkflowService::set_tasks(const std::string& loop_id,
                                          const std::vector<TaskInput>& tasks) {
  return guarded([&]() -> Result<size_t> {
    auto lock = lock_state(opts_.worktree);
    if (!lock) return fail(lock.error().message);
    return Call(opts_, *cache_).set_tasks(loop_id, tasks);
  });
}

Result<WorkflowAnswer> WorkflowService::status() {
  return guarded([&] { return Call(opts_, *cache_).status(); });
}

Result<WorkflowAnswer> WorkflowService::advance(const std::string& output) {
  return guarded([&]() -> Result<WorkflowAnswer> {
    auto lock = lock_state(opts_.worktree);
    if (!lock) return fail(lock.error().message);
    return Call(opts_, *cache_).advance(output);
  });
}

Result<std::optional<WorkflowAnswer>> WorkflowService::take_gate(std::string_view by) {
  return guarded([&]() -> Result<std::optional<WorkflowAnswer>> {
    auto lock = lock_if_state(opts_.worktree);
    if (!lock) return std::unexpected(lock.error());
    return Call(opts_, *cache_).take_gate(by);
  });
}

Result<std::optional<Confirmation>> WorkflowService::confirm(ContextAction done,
                                                             std::string_view by) {
  return guarded([&]() -> Result<std::optional<Confirmation>> {
    auto lock = lock_if_state(opts_.worktree);
    if (!lock) return std::unexpected(lock.error());
    return Call(opts_, *cache_).confirm(done, by);
  });
}

ToolOutcome WorkflowService::refused(const std::string& message, bool after_state) {
  auto lock = lock_state(opts_.worktree);
  if (!lock) return error_outcome(lock.error().message);
  if (after_state) {
    const auto loaded = Call(opts_, *cache_).read_only();
    if (loaded.error) return error_outcome(*loaded.error);
    if (!loaded.machine) return error_outcome(kNotStarted);
  }
  return error_outcome(message);
}

ToolOutcome WorkflowService::call(std::string_view tool, const json& arguments) {
  static const json kEmpty = json::object();
  const json& args = arguments.is_object() ? arguments : kEmpty;
  if (!arguments.is_null() && !arguments.is_object())
    return error_outcome("arguments must be an object");
  try {
    if (tool == "workflow_start") {
      StartRequest request;
      if (args.contains("workflow")) {
        if (!args["workflow"].is_string()) return refused("workflow must be a string", false);
        request.workflow = args["workflow"].get<std::string>();
      }
      if (args.contains("summary") && args["summary"].is_string())
        request.summary = args["summary"].get<std::string>();
      auto r = start(request);
      return r ? render(*r, opts_.supervised, *cache_) : error_outcome(r.error().message);
    }
    if (tool == "workflow_set_tasks") {
      auto parsed = parse_set_tasks(args);
      if (!parsed) return refused(parsed.error().message, true);
      auto r = set_tasks(parsed->loop_id, parsed->tasks);
      if (!r) return error_outcome(r.error().message);
      ojson body = ojson::object();
      body["success"] = true;
      body["tasksSet"] = *r;
      return {js::stringify(body, 0), false};
    }
    if (tool == "workflow_status") {
      auto r = status();
      return r ? render(*r, opts_.supervised, *cache_) : error_outcome(r.error().message);
    }
    if (tool == "workflow_advance") {
      if (args.contains("output") && !args["output"].is_string())
        return refused("output must be a string", true);
      auto r = advance(args.contains("output") ? args["output"].get<std::string>() : std::string());
      return r ? render(*r, opts_.supervised, *cache_) : error_outcome(r.error().message);
    }
    if (tool == "workflow_context") return Call(opts_, *cache_).context();
    if (tool == "workflow_list") return Call(opts_, *cache_).list();
    return error_outcome(fmt::format("Unknown tool: {}", tool));
  } catch (const std::exception& e) {
    return error_outcome(e.what());
  }
}

std::string WorkflowService::instructions() {
  return "This server drives a step-by-step workflow. Call workflow_start (with a short summary; "
         "with `workflow` naming a "
         "template from workflow_list when none is configured), do what the returned instructions "
         "say, then call "
         "workflow_advance with a summary of what you did, until the status is complete. In a loop "
         "step, first call "
         "workflow_set_tasks with the tasks. When an answer carries contextAction (/compact or "
         "/clear), that command must "
         "be run before the step; then call workflow_status to get the step's instructions. "
         "workflow_context returns the "
         "outputs of earlier steps.";
}

json WorkflowService::tools() {
  auto object_schema = [](json properties, json required) {
    return json{{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)}};
  };
  json list = json::array();
  list.push_back(
      {{"name", "workflow_start"},
       {"description",
        "Initialize the workflow and return the first step instructions. If the workflow was "
        "previously started, "
        "returns the current status."},
       {"inputSchema",
        object_schema({{"summary",
                        {{"type", "string"},
                         {"description", "Brief summary of the user's request (max 10 words)."}}},
                       {"workflow",
                        {{"type", "string"},
                         {"description",
                          "Workflow template to start: a name from workflow_list or a path to a "
                          "YAML file. Needed "
                          "only when the server was started without one."}}}},
                      json::array())}});
  list.push_back(
      {{"name", "workflow_set_tasks"},
       {"description",
        "Associate tasks with a loop step. Each task will be iterated through the loop sub-steps."},
       {"inputSchema",
        object_schema(
            {{"loop_id",
              {{"type", "string"},
               {"description", "The loop ID to associate tasks with (must match a loop step id)"}}},
             {"tasks",
              {{"type", "array"},
               {"description", "Array of tasks to iterate over in the loop"},
               {"items",
                {{"type", "object"},
                 {"properties",
                  {{"id", {{"type", "string"}, {"description", "Unique task identifier"}}},
                   {"title", {{"type", "string"}, {"description", "Human-readable task title"}}},
                   {"description",
                    {{"type", "string"}, {"description", "Optional detailed description"}}}}},
                 {"required", {"id", "title"}}}}}}},
            {"loop_id", "tasks"})}});
  list.push_back({{"name", "workflow_status"},
                  {"description",
                   "Get current workflow position with full context. Returns step, sub-step (if in "
                   "loop), agent, instructions, "
                   "and progress. For ralph steps, includes ralphIteration and ralphTotal fields "
                   "indicating which iteration "
                   "(1-N) you are on."},
                  {"inputSchema", object_schema(json::object(), json::array())}});
  list.push_back({{"name", "workflow_advance"},
                  {"description",
                   "Complete the current step/sub-step and advance to the next. Provide output "
                   "summarizing what was "
                   "accomplished. For ralph steps (iterative refinement), advancing may return the "
                   "SAME step again with "
                   "incremented iteration number - this is intentional and you should work on it "
                   "again to improve quality."},
                  {"inputSchema",
                   object_schema({{"output",
                                   {{"type", "string"},
                                    {"description", "Output/summary from the completed step"}}}},
                                 {"output"})}});
  list.push_back(
      {{"name", "workflow_context"},
       {"description",
        "Get outputs from previous steps. Returns a record keyed by step path (e.g., \"plan\" or "
        "\"implement.task-1.code\")."},
       {"inputSchema", object_schema(json::object(), json::array())}});
  list.push_back({{"name", "workflow_list"},
                  {"description",
                   "List the workflow templates that workflow_start can start (name, description, "
                   "file), from the template "
                   "search path."},
                  {"inputSchema", object_schema(json::object(), json::array())}});
  return list;
}

}  // namespace ctxkit::workflow
