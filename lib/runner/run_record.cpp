#include "runner/run_record.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr uint64_t kMaxRunJson = 64ull << 20;

// The project folder a run folder lives in (<project>/.ctxkit/runs/<id>), the base below which
// no link is followed.
fs::path project_of(const fs::path& folder) {
  return folder.parent_path().parent_path().parent_path();
}
}  // namespace

Result<RunRecord> RunRecord::load(const fs::path& folder) {
  auto j = read_json(folder);
  if (!j) return std::unexpected(j.error());
  return RunRecord(folder, run_state_from_json(*j));
}

Result<ojson> RunRecord::read_json(const fs::path& folder) {
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0)
    return fail(fmt::format("no run at {}", folder.string()), Error::Kind::NotFound);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return fail(fmt::format("{} is not a ctxkit run folder (not a directory of this user)",
                            folder.string()),
                Error::Kind::Invalid);
  auto text = util::read_file(folder / "run.json", {kMaxRunJson, false});
  if (!text)
    return fail(
        fmt::format("{} is not a ctxkit run folder ({})", folder.string(), text.error().message),
        Error::Kind::Invalid);
  constexpr size_t kMaxDepth = 64;  // run.json nests 4 levels; it lives in the project tree
  ojson state = util::json_depth(*text, kMaxDepth) > kMaxDepth
                    ? ojson(ojson::value_t::discarded)
                    : ojson::parse(*text, nullptr, false);
  if (state.is_discarded() || !state.is_object() || state.value("ctxkit", "") != "run" ||
      state.value("version", 0) != 1 || state.value("run_id", "") != folder.filename().string() ||
      !state["tasks"].is_array())
    return fail(fmt::format("{} is not a ctxkit run folder (run.json is not a ctxkit run)",
                            folder.string()),
                Error::Kind::Invalid);
  return state;
}

Result<void> RunRecord::create() {
  std::error_code ec;
  if (fs::exists(folder_, ec)) return fail(fmt::format("{} already exists", folder_.string()));
  if (auto r = util::make_private_dirs(folder_, project_of(folder_)); !r) return r;
  return save();
}

Result<void> RunRecord::save() {
  return util::write_file_atomic(
      file(), run_state_json(state).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n",
      0600, util::Durability::Flush);
}

Result<void> RunRecord::append_event(const std::string& line) {
  return util::append_private_line(folder_ / "events.jsonl", line);
}

Result<void> RunRecord::write_file(const std::string& relative, std::string_view data) {
  const fs::path path = folder_ / relative;
  // Each folder is made (links refused) once; a run writes several files into each.
  if (!made_.contains(path.parent_path())) {
    if (auto r = util::make_private_dirs(path.parent_path(), folder_); !r) return r;
    made_.insert(path.parent_path());
  }
  return util::write_file_atomic(path, data, 0600, util::Durability::Flush);
}

Result<std::string> RunRecord::read_file(const std::string& relative) const {
  // The name may come from run.json: only a file below the folder.
  const fs::path rel(relative);
  if (rel.empty() || rel.is_absolute() ||
      std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; }))
    return fail(fmt::format("{}: '{}' is not a file of the run folder", folder_.string(), relative),
                Error::Kind::Invalid);
  return util::read_file(folder_ / relative, {kMaxRunJson, false});
}

Result<void> RunRecord::lock() {
  // A few tries: `ctx-run report` looks at the lock for an instant (FileLock::held).
  auto l = util::FileLock::acquire(folder_ / "run.lock", false);
  for (int i = 0; i < 5 && l && !*l; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    l = util::FileLock::acquire(folder_ / "run.lock", false);
  }
  if (!l) return std::unexpected(l.error());
  if (!*l)
    return fail(fmt::format("run {} is being driven by another ctx-run (it holds {})",
                            folder_.filename().string(), (folder_ / "run.lock").string()),
                Error::Kind::Busy);
  lock_ = std::move(*l);
  return {};
}

bool RunRecord::in_use(const fs::path& folder) {
  return util::FileLock::held(folder / "run.lock");
}

std::string RunRecord::safe_name(const std::string& id) {
  std::string out;
  for (char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") return "_";
  return out.substr(0, 128);
}

namespace {
// Reading run.json by content: a value of another type is the default.
std::string text_of(const ojson& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<std::string> optional_text(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
std::optional<int64_t> optional_ms(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}
int count_of(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return static_cast<int>(std::clamp<int64_t>(it->get<int64_t>(), std::numeric_limits<int>::min(),
                                              std::numeric_limits<int>::max()));
}
std::optional<uint64_t> optional_unsigned(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}
std::optional<double> optional_number(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
ojson ms_json(const std::optional<int64_t>& ms) {
  return ms ? ojson(*ms) : ojson();
}
// The keys of `j` that are not `known`.
ojson others(const ojson& j, std::initializer_list<std::string_view> known) {
  ojson out = ojson::object();
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) out[it.key()] = *it;
  return out;
}
void add_others(ojson& j, const ojson& extra) {
  if (!extra.is_object()) return;
  for (auto it = extra.begin(); it != extra.end(); ++it)
    if (!j.contains(it.key())) j[it.key()] = *it;
}

ojson session_json(const SessionRecord& s) {
  ojson j = {{"id", s.id},
             {"task_key", s.task_key},
             {"anchor_epoch", s.anchor_epoch},
             {"anchor_file", s.anchor_file}};
  if (s.context_tokens) j["context_tokens"] = *s.context_tokens;
  if (s.context_window) j["context_window"] = *s.context_window;
  add_others(j, s.extra);
  return j;
}
SessionRecord session_from(const ojson& j) {
  SessionRecord s;
  s.id = text_of(j, "id");
  s.task_key = text_of(j, "task_key");
  s.anchor_epoch = count_of(j, "anchor_epoch");
  s.anchor_file = text_of(j, "anchor_file");
  s.context_tokens = optional_unsigned(j, "context_tokens");
  s.context_window = optional_unsigned(j, "context_window");
  s.extra = others(
      j, {"id", "task_key", "anchor_epoch", "anchor_file", "context_tokens", "context_window"});
  return s;
}

ojson task_json(const TaskRecord& t) {
  ojson j = {{"id", t.id},
             {"title", t.title},
             {"status", t.status},
             {"iterations", t.iterations},
             {"resets", t.resets},
             {"compactions", t.compactions},
             {"anchoring_tokens", t.anchoring_tokens},
             {"usage", usage_json(t.usage)},
             {"sessions", t.sessions},
             {"started_at_ms", ms_json(t.started_at_ms)},
             {"ended_at_ms", ms_json(t.ended_at_ms)},
             {"wall_ms", t.wall_ms}};
  if (t.context_mode) j["context_mode"] = *t.context_mode;
  if (t.git_head) j["git_head"] = *t.git_head;
  if (t.cost_usd) j["cost_usd"] = *t.cost_usd;
  if (t.reason) j["reason"] = *t.reason;
  add_others(j, t.extra);
  return j;
}
TaskRecord task_from(const ojson& j) {
  TaskRecord t;
  if (!j.is_object()) return t;
  t.id = text_of(j, "id");
  t.title = text_of(j, "title");
  t.status = text_of(j, "status");
  t.iterations = count_of(j, "iterations");
  t.resets = count_of(j, "resets");
  t.compactions = count_of(j, "compactions");
  t.anchoring_tokens = optional_unsigned(j, "anchoring_tokens").value_or(0);
  if (const auto it = j.find("usage"); it != j.end()) t.usage = usage_from_json(*it);
  if (const auto it = j.find("sessions"); it != j.end() && it->is_array())
    for (const auto& s : *it)
      if (s.is_string()) t.sessions.push_back(s.get<std::string>());
  t.started_at_ms = optional_ms(j, "started_at_ms");
  t.ended_at_ms = optional_ms(j, "ended_at_ms");
  t.wall_ms = optional_ms(j, "wall_ms").value_or(0);
  t.context_mode = optional_text(j, "context_mode");
  t.git_head = optional_text(j, "git_head");
  t.cost_usd = optional_number(j, "cost_usd");
  t.reason = optional_text(j, "reason");
  t.extra = others(j, {"id", "title", "status", "iterations", "resets", "compactions",
                       "anchoring_tokens", "usage", "sessions", "started_at_ms", "ended_at_ms",
                       "wall_ms", "context_mode", "git_head", "cost_usd", "reason"});
  return t;
}
}  // namespace

ojson usage_json(const claude::TokenUsage& u) {
  return {{"input", u.input},
          {"cache_creation", u.cache_creation},
          {"cache_read", u.cache_read},
          {"output", u.output}};
}

claude::TokenUsage usage_from_json(const ojson& j) {
  if (!j.is_object()) return {};
  auto count = [&](const char* key) { return optional_unsigned(j, key).value_or(0); };
  return {count("input"), count("cache_creation"), count("cache_read"), count("output")};
}

ojson run_state_json(const RunState& s) {
  ojson attempts = ojson::object();
  for (const auto& [key, n] : s.attempts) attempts[key] = n;
  ojson pending;
  if (s.pending_action)
    pending = {{"key", s.pending_action->key},
               {"action", s.pending_action->action},
               {"focus", s.pending_action->focus}};
  ojson tasks = ojson::array();
  for (const auto& t : s.tasks) tasks.push_back(task_json(t));
  ojson j = {{"ctxkit", "run"},
             {"version", 1},
             {"run_id", s.run_id},
             {"project", s.project},
             {"mode", s.mode},
             {"mode_origin", s.mode_origin},
             {"source", s.source},
             {"status", s.status},
             {"started_at_ms", s.started_at_ms},
             {"ended_at_ms", ms_json(s.ended_at_ms)},
             {"iterations", s.iterations},
             {"session", s.session ? session_json(*s.session) : ojson()},
             {"previous_summary", s.previous_summary},
             {"attempts", attempts},
             {"pending_action", pending},
             {"usage", usage_json(s.usage)},
             {"tokens_total", s.tokens_total},
             {"cost_usd", s.cost_usd},
             {"options", s.options},
             {"task_specs", s.task_specs},
             {"tasks", tasks}};
  if (s.session_totals) {
    ojson all = ojson::object();
    for (const auto& [id, totals] : *s.session_totals)
      all[id] = {{"usage", usage_json(totals.usage)}, {"cost_usd", totals.cost_usd}};
    j["session_totals"] = all;
  }
  if (s.stopped_on) j["stopped_on"] = *s.stopped_on;
  if (s.refused_call)
    j["refused_call"] = {{"key", s.refused_call->key}, {"fresh", s.refused_call->fresh}};
  add_others(j, s.extra);
  return j;
}

RunState run_state_from_json(const ojson& j) {
  RunState s;
  if (!j.is_object()) return s;
  s.run_id = text_of(j, "run_id");
  s.project = text_of(j, "project");
  s.mode = text_of(j, "mode");
  s.mode_origin = text_of(j, "mode_origin");
  if (const auto it = j.find("source"); it != j.end() && it->is_object()) s.source = *it;
  s.status = text_of(j, "status");
  s.started_at_ms = optional_ms(j, "started_at_ms").value_or(0);
  s.ended_at_ms = optional_ms(j, "ended_at_ms");
  s.iterations = count_of(j, "iterations");
  if (const auto it = j.find("session"); it != j.end() && it->is_object())
    s.session = session_from(*it);
  s.previous_summary = text_of(j, "previous_summary");
  if (const auto it = j.find("attempts"); it != j.end() && it->is_object())
    for (auto a = it->begin(); a != it->end(); ++a)
      if (a->is_number_integer()) s.attempts[a.key()] = count_of(*it, a.key().c_str());
  if (const auto it = j.find("pending_action"); it != j.end() && it->is_object())
    s.pending_action =
        PendingAction{text_of(*it, "key"), text_of(*it, "action"), text_of(*it, "focus")};
  if (const auto it = j.find("usage"); it != j.end()) s.usage = usage_from_json(*it);
  s.tokens_total = optional_unsigned(j, "tokens_total").value_or(0);
  s.cost_usd = optional_number(j, "cost_usd").value_or(0);
  if (const auto it = j.find("options"); it != j.end() && it->is_object()) s.options = *it;
  if (const auto it = j.find("task_specs"); it != j.end() && it->is_array()) s.task_specs = *it;
  if (const auto it = j.find("tasks"); it != j.end() && it->is_array())
    for (const auto& t : *it) s.tasks.push_back(task_from(t));
  if (const auto it = j.find("session_totals"); it != j.end() && it->is_object()) {
    s.session_totals.emplace();
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (!e->is_object()) continue;
      claude::SessionTotals totals;
      if (const auto u = e->find("usage"); u != e->end()) totals.usage = usage_from_json(*u);
      totals.cost_usd = optional_number(*e, "cost_usd").value_or(0);
      (*s.session_totals)[e.key()] = totals;
    }
  }
  if (const auto it = j.find("stopped_on"); it != j.end()) s.stopped_on = *it;
  if (const auto it = j.find("refused_call"); it != j.end() && it->is_object()) {
    const auto fresh = it->find("fresh");
    s.refused_call = RefusedCall{text_of(*it, "key"),
                                 fresh != it->end() && fresh->is_boolean() && fresh->get<bool>()};
  }
  s.extra = others(
      j, {"ctxkit",      "version",        "run_id",           "project",       "mode",
          "mode_origin", "source",         "status",           "started_at_ms", "ended_at_ms",
          "iterations",  "session",        "previous_summary", "attempts",      "pending_action",
          "usage",       "tokens_total",   "cost_usd",         "options",       "task_specs",
          "tasks",       "session_totals", "stopped_on",       "refused_call"});
  return s;
}

}  // namespace ctxkit::runner
