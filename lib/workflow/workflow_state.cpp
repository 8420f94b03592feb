#include "workflow/workflow_state.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cstring>

#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "workflow/js_compat.hpp"

namespace ctxkit::workflow {
namespace {
using ojson = nlohmann::ordered_json;

ojson undefined() {
  return ojson(ojson::value_t::discarded);
}

// The member `key` of `obj`, nullptr when there is none (or `obj` is no object): a walk that
// compares lengths first (find() compares every key as a C string; the state is read many times
// per answer).
const ojson* member(const ojson& obj, std::string_view key) {
  const auto* members = obj.get_ptr<const ojson::object_t*>();
  if (!members) return nullptr;
  for (const auto& m : *members)
    if (m.first.size() == key.size() && std::memcmp(m.first.data(), key.data(), key.size()) == 0)
      return &m.second;
  return nullptr;
}

bool defined(const ojson& obj, std::string_view key) {
  const ojson* v = member(obj, key);
  return v && !v->is_discarded();
}

bool truthy(const ojson& v) {
  if (v.is_discarded() || v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return true;
}

// The reference server keeps one state object in memory for its whole life, so a key set back
// to undefined keeps its place and reappears there. A state read from a file has lost those
// places; this puts the known keys back in the order that object has (undefined ones as
// placeholders), then any other keys in file order. `first_is_ralph`: the initial state of a
// workflow starting with a ralph step creates ralphIteration before the summary.
ojson canonical_order(ojson state, bool first_is_ralph) {
  std::vector<const char*> order = {"status",
                                    "step",
                                    "stepType",
                                    "tasks",
                                    "outputs",
                                    "artefacts",
                                    "currentStepArtefacts",
                                    "contextActionExecuted",
                                    "workflow_definition"};
  if (first_is_ralph) order.push_back("ralphIteration");
  for (const char* k : {"summary", "task", "subStep"}) order.push_back(k);
  if (!first_is_ralph) order.push_back("ralphIteration");
  ojson out = ojson::object();
  for (const char* k : order) {
    auto it = state.find(k);
    out[k] = it != state.end() ? *it : ojson(ojson::value_t::discarded);
  }
  for (auto it = state.begin(); it != state.end(); ++it)
    if (!out.contains(it.key())) out[it.key()] = it.value();
  return out;
}

// A task whose status is exactly "done", looked at in place: the members are walked with the
// key's length compared first (find() compares every key as a C string, and this runs once per
// task on every status).
bool is_done(const ojson& task) {
  if (!task.is_object()) return false;
  const auto& members = *task.get_ptr<const ojson::object_t*>();
  for (auto it = members.rbegin(); it != members.rend(); ++it) {  // written last: found first
    const std::string& key = it->first;
    if (key.size() != 6 || std::memcmp(key.data(), "status", 6) != 0) continue;
    const auto* value = it->second.get_ptr<const std::string*>();
    return value && value->size() == 4 && std::memcmp(value->data(), "done", 4) == 0;
  }
  return false;
}

long as_long(const ojson& v, long fallback) {
  if (!v.is_number()) return fallback;
  const double d = v.get<double>();
  return d != 0 ? static_cast<long>(d) : fallback;
}
}  // namespace

ojson WorkflowMachine::initial_state(const WorkflowTemplate& tmpl) {
  const auto& first = tmpl.steps.front();
  ojson s = ojson::object();
  s["status"] = "running";
  s["step"] = first.id;
  s["stepType"] = to_string(first.type);
  s["tasks"] = ojson::object();
  s["outputs"] = ojson::object();
  s["artefacts"] = ojson::array();
  s["currentStepArtefacts"] = first.artefacts;
  s["contextActionExecuted"] = false;
  s["workflow_definition"] = tmpl.definition;
  if (first.type == StepType::Ralph) s["ralphIteration"] = 1;
  return s;
}

WorkflowMachine WorkflowMachine::start(WorkflowTemplate tmpl) {
  ojson s = initial_state(tmpl);
  return WorkflowMachine(std::move(tmpl), std::move(s));
}

Result<WorkflowMachine> WorkflowMachine::from_state(ojson state, const WorkflowTemplate* fallback) {
  if (!state.is_object()) return fail("workflow state: not a JSON object", Error::Kind::Corrupt);
  for (const char* key : {"status", "step", "stepType"})
    if (!defined(state, key) || !state[key].is_string())
      return fail(fmt::format("workflow state: '{}' must be a string", key), Error::Kind::Corrupt);
  const std::string st = state["status"].get<std::string>();
  if (st != "running" && st != "complete" && st != "failed")
    return fail(fmt::format("workflow state: unknown status '{}'", st), Error::Kind::Corrupt);
  const std::string type = state["stepType"].get<std::string>();
  if (type != "action" && type != "loop" && type != "ralph")
    return fail(fmt::format("workflow state: unknown stepType '{}'", type), Error::Kind::Corrupt);
  for (const char* key : {"tasks", "outputs"}) {
    if (!defined(state, key)) state[key] = ojson::object();
    if (!state[key].is_object())
      return fail(fmt::format("workflow state: '{}' must be an object", key), Error::Kind::Corrupt);
  }
  if (!defined(state, "artefacts")) state["artefacts"] = ojson::array();
  if (!state["artefacts"].is_array())
    return fail("workflow state: 'artefacts' must be an array", Error::Kind::Corrupt);
  for (auto it = state["tasks"].begin(); it != state["tasks"].end(); ++it) {
    if (!it.value().is_array())
      return fail(fmt::format("workflow state: tasks of '{}' must be an array", it.key()),
                  Error::Kind::Corrupt);
    for (const auto& t : it.value())
      if (!t.is_object() || !t.contains("id") || !t["id"].is_string() || !t.contains("title") ||
          !t["title"].is_string())
        return fail(fmt::format("workflow state: a task of '{}' lacks an id or a title", it.key()),
                    Error::Kind::Corrupt);
  }
  for (auto it = state["outputs"].begin(); it != state["outputs"].end(); ++it)
    if (!it.value().is_string())
      return fail(fmt::format("workflow state: output '{}' must be a string", it.key()),
                  Error::Kind::Corrupt);
  if (defined(state, "task")) {
    const auto& t = state["task"];
    if (!t.is_object() || !t.contains("index") || !t["index"].is_number_integer() ||
        !t.contains("id") || !t["id"].is_string() || !t.contains("title") ||
        !t["title"].is_string())
      return fail("workflow state: 'task' must be {index, id, title}", Error::Kind::Corrupt);
  }
  if (defined(state, "subStep") && !state["subStep"].is_string())
    return fail("workflow state: 'subStep' must be a string", Error::Kind::Corrupt);
  if (defined(state, "ralphIteration") && !state["ralphIteration"].is_number())
    return fail("workflow state: 'ralphIteration' must be a number", Error::Kind::Corrupt);
  if (defined(state, "summary") && !state["summary"].is_string())
    return fail("workflow state: 'summary' must be a string", Error::Kind::Corrupt);

  WorkflowTemplate tmpl;
  if (defined(state, "workflow_definition") && truthy(state["workflow_definition"])) {
    auto t = template_from_json(state["workflow_definition"]);
    if (!t) return fail(t.error().message, Error::Kind::Corrupt);
    tmpl = std::move(*t);
  } else if (fallback) {
    tmpl = *fallback;
  } else {
    return fail("workflow state: no workflow_definition and no workflow template to resume it with",
                Error::Kind::Corrupt);
  }
  const bool first_is_ralph = tmpl.steps.front().type == StepType::Ralph;
  const std::string step = state["step"].get<std::string>();
  if (!tmpl.find_step(step))
    return fail(fmt::format("Step '{}' not found in template", step), Error::Kind::Corrupt);
  if (type == "loop" && !tmpl.loop(step)) {
    if (tmpl.loops.empty()) return fail("No loops defined in template", Error::Kind::Corrupt);
    return fail(fmt::format("Loop '{}' not found in template", step), Error::Kind::Corrupt);
  }
  return WorkflowMachine(std::move(tmpl), canonical_order(std::move(state), first_is_ralph));
}

Result<WorkflowMachine> WorkflowMachine::from_state_text(std::string_view text,
                                                         const WorkflowTemplate* fallback) {
  // A state is a template (64 levels at most) and a few levels around it.
  constexpr size_t kMaxDepth = 128;
  if (util::json_depth(text, kMaxDepth) > kMaxDepth)
    return fail(fmt::format("workflow state: nested deeper than {} levels", kMaxDepth),
                Error::Kind::Corrupt);
  ojson doc = util::parse_ordered_json(text);
  if (doc.is_discarded()) return fail("workflow state: not valid JSON", Error::Kind::Corrupt);
  return from_state(std::move(doc), fallback);
}

bool WorkflowMachine::has(const char* key) const {
  return defined(state_, key);
}

void WorkflowMachine::unset(const char* key) {
  state_[key] = undefined();
}

const ojson& WorkflowMachine::field(std::string_view key) const {
  static const ojson kNone;
  const ojson* v = member(state_, key);
  return v ? *v : kNone;
}

std::string WorkflowMachine::state_status() const {
  return field("status").get<std::string>();
}
std::string WorkflowMachine::step_id() const {
  return field("step").get<std::string>();
}

StepType WorkflowMachine::step_type() const {
  const auto& t = field("stepType").get_ref<const std::string&>();
  return t == "loop" ? StepType::Loop : t == "ralph" ? StepType::Ralph : StepType::Action;
}

const WorkflowStep& WorkflowMachine::current_step() const {
  return *tmpl_.find_step(step_id());
}

const std::vector<LoopStep>& WorkflowMachine::loop_steps() const {
  return *tmpl_.loop(step_id());
}

const LoopStep* WorkflowMachine::current_loop_step() const {
  if (step_type() != StepType::Loop || !has("subStep")) return nullptr;
  const auto* subs = tmpl_.loop(step_id());
  if (!subs) return nullptr;
  const auto& sub = state_["subStep"].get_ref<const std::string&>();
  for (const auto& s : *subs)
    if (s.id == sub) return &s;
  return nullptr;
}

int WorkflowMachine::sub_step_index() const {
  if (!has("subStep")) return -1;
  const auto& sub = state_["subStep"].get_ref<const std::string&>();
  const auto& subs = loop_steps();
  for (size_t i = 0; i < subs.size(); ++i)
    if (subs[i].id == sub) return static_cast<int>(i);
  return -1;
}

const ojson* WorkflowMachine::current_tasks() const {
  const ojson* tasks = member(field("tasks"), field("step").get_ref<const std::string&>());
  return tasks && tasks->is_array() ? tasks : nullptr;
}

ojson& WorkflowMachine::tasks_of(const std::string& loop_id) {
  return state_["tasks"][loop_id];
}

ojson WorkflowMachine::task() const {
  return has("task") ? state_["task"] : ojson(nullptr);
}

std::optional<CurrentTask> WorkflowMachine::current_task() const {
  if (!has("task")) return std::nullopt;
  const auto& t = state_["task"];
  return CurrentTask{t["index"].get<long>(), t["id"].get<std::string>(),
                     t["title"].get<std::string>()};
}

bool WorkflowMachine::has_tasks(std::string_view loop_id) const {
  const ojson* tasks = member(field("tasks"), loop_id);
  return tasks && !tasks->empty();
}

std::optional<long> WorkflowMachine::ralph_iteration() const {
  if (step_type() != StepType::Ralph) return std::nullopt;
  return has("ralphIteration") ? as_long(state_["ralphIteration"], 1) : 1;
}

std::optional<std::string> WorkflowMachine::summary() const {
  if (!has("summary")) return std::nullopt;
  return state_["summary"].get<std::string>();
}

bool WorkflowMachine::action_executed() const {
  return has("contextActionExecuted") && truthy(state_["contextActionExecuted"]);
}

ContextAction WorkflowMachine::declared_action() const {
  if (const auto* sub = current_loop_step(); sub && sub->context != ContextAction::None)
    return sub->context;
  return current_step().context;
}

ContextAction WorkflowMachine::pending_action() const {
  if (action_executed()) return ContextAction::None;
  return declared_action();
}

void WorkflowMachine::mark_action_executed() {
  ++revision_;
  state_["contextActionExecuted"] = true;
}

std::string WorkflowMachine::agent() const {
  const auto& step = current_step();
  if (step.type == StepType::Loop && has("subStep")) {
    const auto* sub = current_loop_step();
    if (sub && !sub->agent.empty()) return sub->agent;
    return step.agent;
  }
  return step.agent;
}

std::string WorkflowMachine::instructions() const {
  const auto& step = current_step();
  std::string text;
  if (step.type == StepType::Action || step.type == StepType::Ralph) text = step.instructions;
  if (const auto* sub = current_loop_step()) {
    if (has("task")) {
      text =
          js::replace_all(sub->instructions, "{task.id}", state_["task"]["id"].get<std::string>());
      text = js::replace_all(text, "{task.title}", state_["task"]["title"].get<std::string>());
    } else {
      text = sub->instructions;
    }
  }
  const std::string a = agent();
  if (!a.empty())
    text = fmt::format("SPAWN the '{}' sub-agent to handle this step:\n\n{}", a, text);
  if (state_status() == "running" && step_type() == StepType::Ralph) {
    const long n = current_step().n;
    const long it = *ralph_iteration();
    if (it > 1)
      text = fmt::format(
          "{}\n\n[Ralph Loop - Iteration {} of {}]\nYou are receiving THE SAME TASK again to "
          "refine and improve your previous "
          "result. This is intentional - you should work on this task again, NOT skip it. Your "
          "goal is to iterate and improve "
          "the quality of the work from iteration {}.",
          text, it, n, it - 1);
    else
      text = fmt::format(
          "{}\n\n[Ralph Loop - Iteration 1 of {}]\nThis task will be repeated {} times to "
          "iteratively improve the result. After "
          "you complete this iteration, you will receive the SAME TASK again to refine your work. "
          "Each iteration is an "
          "opportunity to improve quality.",
          text, n, n);
  }
  return text;
}

// The figures of the status answer's `progress`.
struct WorkflowMachine::Progress {
  long current_step = 0;
  size_t total_steps = 0;
  bool loop = false;
  size_t completed_tasks = 0, total_tasks = 0;
  std::optional<std::string> current_task;  // "Task i/n, Sub-step j/m"
};

WorkflowMachine::Progress WorkflowMachine::progress_figures() const {
  Progress p;
  p.current_step = tmpl_.step_index(step_id()) + 1;
  p.total_steps = tmpl_.steps.size();
  if (step_type() == StepType::Loop) {
    p.loop = true;
    const ojson* tasks = current_tasks();
    p.total_tasks = tasks ? tasks->size() : 0;
    if (tasks)
      for (const auto& t : tasks->get_ref<const ojson::array_t&>())
        p.completed_tasks += is_done(t) ? 1u : 0u;
    if (has("task"))
      p.current_task =
          fmt::format("Task {}/{}, Sub-step {}/{}", state_["task"]["index"].get<long>() + 1,
                      p.total_tasks, sub_step_index() + 1, loop_steps().size());
  }
  return p;
}

ojson WorkflowMachine::progress() const {
  const Progress f = progress_figures();
  ojson p = ojson::object();
  p["currentStep"] = f.current_step;
  p["totalSteps"] = f.total_steps;
  if (f.loop) {
    p["completedTasks"] = f.completed_tasks;
    p["totalTasks"] = f.total_tasks;
    if (f.current_task) p["currentTaskProgress"] = *f.current_task;
  }
  return p;
}

ojson WorkflowMachine::status() const {
  const std::string st = state_status();
  ojson r = ojson::object();
  if (st != "running") {
    r["status"] = st;
    r["step"] = step_id();
    r["stepType"] = state_["stepType"];
    r["agent"] = nullptr;
    r["delegate"] = false;
    r["instructions"] = st == "complete" ? "Workflow complete." : "Workflow failed.";
    r["progress"] = progress();
    r["artefacts"] = state_["artefacts"];
    return r;
  }
  const std::string a = agent();
  r["status"] = "running";
  r["step"] = step_id();
  r["stepType"] = state_["stepType"];
  r["agent"] = a.empty() ? ojson(nullptr) : ojson(a);
  r["delegate"] = !a.empty();
  r["instructions"] = instructions();
  r["progress"] = progress();
  r["artefacts"] = state_["artefacts"];
  if (step_type() == StepType::Loop) {
    const ojson* tasks = current_tasks();
    if (has("task")) {
      ojson t = state_["task"];
      t["total"] = tasks ? tasks->size() : 0;
      r["task"] = t;
    }
    if (has("subStep")) {
      r["subStep"] = state_["subStep"];
      r["subStepIndex"] = sub_step_index();
      r["totalSubSteps"] = loop_steps().size();
    }
  }
  if (step_type() == StepType::Ralph) {
    r["ralphIteration"] = *ralph_iteration();
    r["ralphTotal"] = current_step().n == 0 ? 1 : current_step().n;
  }
  return r;
}

namespace {
// The members of an object as JSON.stringify(…, null, 2) writes it `level` levels deep; an
// undefined (discarded) value leaves its member out.
class PrettyObject {
 public:
  PrettyObject(std::string& out, int level) : out_(out), level_(level) { out_ += '{'; }
  void string(std::string_view k, std::string_view v) { js::append_string(key(k), v); }
  template <typename Int>
  void number(std::string_view k, Int v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    key(k).append(buf, res.ptr);
  }
  void boolean(std::string_view k, bool v) { key(k) += v ? "true" : "false"; }
  void null(std::string_view k) { key(k) += "null"; }
  void value(std::string_view k, const ojson& v) {
    if (v.is_discarded()) return;
    js::append_stringified(key(k), v, 2, level_ + 1);
  }
  // Starts member `k` whose value the caller writes (an object: PrettyObject(out, level + 1)).
  std::string& key(std::string_view k) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_.append(static_cast<size_t>(2 * (level_ + 1)), ' ');
    out_ += '"';  // the keys are this file's own, plain ASCII names
    out_ += k;
    out_ += "\": ";
    return out_;
  }
  void close() {
    if (!first_) {
      out_ += '\n';
      out_.append(static_cast<size_t>(2 * level_), ' ');
    }
    out_ += '}';
  }

 private:
  std::string& out_;
  int level_;
  bool first_ = true;
};
}  // namespace

std::string WorkflowMachine::status_text(bool reminder) const {
  std::string out;
  out.reserve(1024);
  PrettyObject r(out, 0);
  const auto& st = field("status").get_ref<const std::string&>();
  const bool running = st == "running";
  const std::string a = running ? agent() : std::string();
  r.string("status", st);
  r.string("step", field("step").get_ref<const std::string&>());
  r.value("stepType", field("stepType"));
  if (a.empty())
    r.null("agent");
  else
    r.string("agent", a);
  r.boolean("delegate", !a.empty());
  if (running)
    r.string("instructions", reminder ? instructions() + kAdvanceReminder : instructions());
  else
    r.string("instructions", st == "complete" ? "Workflow complete." : "Workflow failed.");
  {
    const Progress f = progress_figures();
    PrettyObject p(r.key("progress"), 1);
    p.number("currentStep", f.current_step);
    p.number("totalSteps", f.total_steps);
    if (f.loop) {
      p.number("completedTasks", f.completed_tasks);
      p.number("totalTasks", f.total_tasks);
      if (f.current_task) p.string("currentTaskProgress", *f.current_task);
    }
    p.close();
  }
  r.value("artefacts", field("artefacts"));
  if (running && step_type() == StepType::Loop) {
    if (has("task")) {
      const ojson* tasks = current_tasks();
      ojson t = field("task");
      t["total"] = tasks ? tasks->size() : 0;
      r.value("task", t);
    }
    if (has("subStep")) {
      r.value("subStep", field("subStep"));
      r.number("subStepIndex", sub_step_index());
      r.number("totalSubSteps", loop_steps().size());
    }
  }
  if (running && step_type() == StepType::Ralph) {
    r.number("ralphIteration", *ralph_iteration());
    r.number("ralphTotal", current_step().n == 0 ? 1 : current_step().n);
  }
  r.close();
  return out;
}

Result<void> WorkflowMachine::set_tasks(const std::string& loop_id,
                                        const std::vector<TaskInput>& tasks) {
  ++revision_;
  if (!tmpl_.loop(loop_id))
    return fail(fmt::format("Loop '{}' not found in template", loop_id), Error::Kind::Invalid);
  ojson arr = ojson::array();
  for (const auto& t : tasks) {
    ojson o = ojson::object();
    o["id"] = t.id;
    o["title"] = t.title;
    o["description"] = t.description ? ojson(*t.description) : undefined();
    o["status"] = "pending";
    arr.push_back(std::move(o));
  }
  tasks_of(loop_id) = std::move(arr);
  if (step_id() == loop_id && step_type() == StepType::Loop && !has("task")) init_loop_iteration();
  return {};
}

void WorkflowMachine::init_loop_iteration() {
  const ojson* tasks = current_tasks();
  if (!tasks || tasks->empty()) {
    advance_to_next_step();
    return;
  }
  const auto& subs = loop_steps();
  ojson t = ojson::object();
  t["index"] = 0;
  t["id"] = (*tasks)[0]["id"];
  t["title"] = (*tasks)[0]["title"];
  state_["task"] = std::move(t);
  if (!subs.empty()) state_["subStep"] = subs.front().id;
  state_["contextActionExecuted"] = false;
  state_["currentStepArtefacts"] = current_step().artefacts;
  tasks_of(step_id())[0]["status"] = "in_progress";
}

std::string WorkflowMachine::output_key() const {
  const StepType t = step_type();
  if (t == StepType::Action) return step_id();
  if (t == StepType::Ralph) return fmt::format("{}.{}", step_id(), *ralph_iteration());
  std::string key = step_id();
  // Appended piece by piece: "." + a temporary trips GCC 12's -Wrestrict at -O3.
  if (has("task")) key.append(".").append(state_["task"]["id"].get<std::string>());
  if (has("subStep")) key.append(".").append(state_["subStep"].get<std::string>());
  return key;
}

void WorkflowMachine::advance_to_next_step() {
  const int next = tmpl_.step_index(step_id()) + 1;
  if (next >= static_cast<int>(tmpl_.steps.size())) {
    state_["status"] = "complete";
    return;
  }
  const auto& step = tmpl_.steps[static_cast<size_t>(next)];
  state_["step"] = step.id;
  state_["stepType"] = to_string(step.type);
  unset("task");
  unset("subStep");
  unset("ralphIteration");
  state_["currentStepArtefacts"] = step.artefacts;
  state_["contextActionExecuted"] = false;
  if (step.type == StepType::Loop) {
    const ojson* tasks = current_tasks();
    if (tasks && !tasks->empty()) init_loop_iteration();
  }
  if (step.type == StepType::Ralph) state_["ralphIteration"] = 1;
}

void WorkflowMachine::advance_within_loop() {
  const auto& subs = loop_steps();
  const int sub = sub_step_index();
  if (sub < static_cast<int>(subs.size()) - 1) {
    state_["subStep"] = subs[static_cast<size_t>(sub + 1)].id;
    state_["contextActionExecuted"] = false;
    return;
  }
  ojson& tasks = tasks_of(step_id());
  if (!tasks.is_array()) tasks = ojson::array();
  long index = -1;
  if (has("task")) {
    index = state_["task"]["index"].get<long>();
    if (index >= 0 && static_cast<size_t>(index) < tasks.size())
      tasks[static_cast<size_t>(index)]["status"] = "done";
  }
  if (index < static_cast<long>(tasks.size()) - 1) {
    const auto next = static_cast<size_t>(index + 1);
    ojson t = ojson::object();
    t["index"] = next;
    t["id"] = tasks[next]["id"];
    t["title"] = tasks[next]["title"];
    state_["task"] = std::move(t);
    state_["subStep"] = subs.front().id;
    state_["contextActionExecuted"] = false;
    tasks[next]["status"] = "in_progress";
    return;
  }
  advance_to_next_step();
}

ojson WorkflowMachine::advance(const std::string& output) {
  ++revision_;
  if (state_status() != "running") return status();
  state_["outputs"][output_key()] = output;
  const StepType t = step_type();
  if (t == StepType::Action) {
    advance_to_next_step();
  } else if (t == StepType::Ralph) {
    const long n = current_step().n == 0 ? 1 : current_step().n;
    const long it = *ralph_iteration();
    if (it < n) {
      state_["ralphIteration"] = it + 1;
      state_["contextActionExecuted"] = false;
    } else {
      advance_to_next_step();
    }
  } else if (has("task") && has("subStep")) {
    advance_within_loop();
  } else {
    advance_to_next_step();
  }
  return status();
}

ojson WorkflowMachine::context() const {
  return state_["outputs"];
}

void WorkflowMachine::set_summary(std::string_view summary) {
  ++revision_;
  std::string s = js::utf16_prefix(js::strip_controls(js::trim(summary)), 100);
  if (!s.empty()) state_["summary"] = s;
}

std::optional<std::pair<std::string, std::string>> WorkflowMachine::latest_output() const {
  const auto& outs = state_["outputs"];
  if (outs.empty()) return std::nullopt;
  auto it = outs.end();
  --it;
  return std::make_pair(it.key(), it.value().get<std::string>());
}

std::string WorkflowMachine::serialize() const {
  return js::stringify(state_, 2);
}

std::optional<std::string> start_summary(std::string_view raw) {
  std::string t = js::trim(raw);
  if (t.empty()) return std::nullopt;
  if (js::utf16_length(t) > 100) t = js::utf16_prefix(t, 97) + "...";
  return t;
}

}  // namespace ctxkit::workflow
