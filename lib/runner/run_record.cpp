#include "runner/run_record.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <concepts>
#include <limits>
#include <thread>
#include <type_traits>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr uint64_t kMaxRunJson = 64ull << 20;

// ctxkit's own folder in the project a run folder lives in (<project>/.ctxkit/runs/<id>): from
// it down no link is followed and every folder is made private; the project folder is the user's.
fs::path ctxkit_folder_of(const fs::path& folder) {
  return folder.parent_path().parent_path();
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
  ojson state = util::json_depth(*text, kMaxDepth) > kMaxDepth ? ojson(ojson::value_t::discarded)
                                                               : util::parse_ordered_json(*text);
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
  if (auto r = util::make_private_dirs(folder_, ctxkit_folder_of(folder_)); !r) return r;
  return save();
}

Result<void> RunRecord::save() {
  return util::write_file_atomic(
      file(), util::dump_json(run_state_json(state), 2, util::BadUtf8::replace) + "\n", 0600,
      util::Durability::Flush);
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
// ------------------------------------------------------------------------------------------
// run.json's objects, each described by one table of its keys (below): the table is the
// object's layout (the keys in the order they are written) and the list of the keys it knows
// (any other key is kept in the record's `extra` and written back after them).

// One key of an object of type T: what is written under it (nothing: the key is left out), and
// how the value found under it (of any type) is read into the record.
template <typename T>
struct Key {
  const char* name;
  std::optional<ojson> (*write)(const T&);
  void (*read)(const ojson&, T&);  // null: the key is written, never read (a constant)
};

// A value of each type as run.json holds it: get() reads it by content and says whether the
// JSON value had the type (a value of another type leaves the field at its default).
template <typename V>
concept Plain = std::is_arithmetic_v<V> || std::is_same_v<V, std::string>;
template <typename V>
concept Emptiable = requires(const V& v) {
  v.empty();
};

template <Plain V>
ojson put(const V& v) {
  return v;
}
ojson put(const claude::TokenUsage& v) {
  return usage_json(v);
}
bool get(const ojson& j, std::string& v) {
  if (!j.is_string()) return false;
  v = j.get<std::string>();
  return true;
}
bool get(const ojson& j, int& v) {  // a count: an integer, clamped to int
  if (!j.is_number_integer()) return false;
  v = static_cast<int>(std::clamp<int64_t>(j.get<int64_t>(), std::numeric_limits<int>::min(),
                                           std::numeric_limits<int>::max()));
  return true;
}
bool get(const ojson& j, int64_t& v) {  // a time in ms
  if (!j.is_number_integer()) return false;
  v = j.get<int64_t>();
  return true;
}
bool get(const ojson& j, uint64_t& v) {  // tokens: a non-negative integer
  // (Parsed, one is unsigned; made in memory from an int, it may be signed.)
  if (!j.is_number_integer() || (!j.is_number_unsigned() && j.get<int64_t>() < 0)) return false;
  v = j.get<uint64_t>();
  return true;
}
bool get(const ojson& j, double& v) {
  if (!j.is_number()) return false;
  v = j.get<double>();
  return true;
}
bool get(const ojson& j, bool& v) {
  if (!j.is_boolean()) return false;
  v = j.get<bool>();
  return true;
}
bool get(const ojson& j, std::vector<std::string>& v) {  // the strings of an array
  if (!j.is_array()) return false;
  for (const auto& e : j)
    if (e.is_string()) v.push_back(e.get<std::string>());
  return true;
}
bool get(const ojson& j, claude::TokenUsage& v) {
  v = usage_from_json(j);
  return j.is_object();
}

// The records: declared here, defined below their tables.
ojson put(const RunSource& v);
ojson put(const RunOptionsRecord& v);
ojson put(const TaskSpecRecord& v);
ojson put(const StopRecord& v);
ojson put(const SessionRecord& v);
ojson put(TaskStatus v);
bool get(const ojson& j, TaskStatus& v);
ojson put(workflow::ContextAction v);
bool get(const ojson& j, workflow::ContextAction& v);
ojson put(const PendingAction& v);
ojson put(const RefusedCall& v);
ojson put(const TaskRecord& v);
ojson put(const claude::SessionTotals& v);
ojson put(const std::map<std::string, int>& v);
ojson put(const std::map<std::string, claude::SessionTotals>& v);
bool get(const ojson& j, RunSource& v);
bool get(const ojson& j, RunOptionsRecord& v);
bool get(const ojson& j, TaskSpecRecord& v);
bool get(const ojson& j, StopRecord& v);
bool get(const ojson& j, SessionRecord& v);
bool get(const ojson& j, PendingAction& v);
bool get(const ojson& j, RefusedCall& v);
bool get(const ojson& j, TaskRecord& v);
bool get(const ojson& j, claude::SessionTotals& v);
bool get(const ojson& j, std::map<std::string, int>& v);
bool get(const ojson& j, std::map<std::string, claude::SessionTotals>& v);
template <typename V>
ojson put(const std::optional<V>& v);
template <typename V>
bool get(const ojson& j, std::optional<V>& v);
template <typename V>
ojson put(const std::vector<V>& v);
template <typename V>
bool get(const ojson& j, std::vector<V>& v);

// An optional value: null (or a value of another type) is none.
template <typename V>
ojson put(const std::optional<V>& v) {
  return v ? put(*v) : ojson();
}
template <typename V>
bool get(const ojson& j, std::optional<V>& v) {
  V value{};
  if (!get(j, value)) return false;
  v = std::move(value);
  return true;
}
// A list of records: an entry that is not one keeps its place as a default record.
template <typename V>
ojson put(const std::vector<V>& v) {
  ojson out = ojson::array();
  for (const auto& e : v) out.push_back(put(e));
  return out;
}
template <typename V>
bool get(const ojson& j, std::vector<V>& v) {
  if (!j.is_array()) return false;
  for (const auto& e : j) get(e, v.emplace_back());
  return true;
}

// Whether a key written "once it arises" is written: an optional that is set, a text or a list
// that is not empty, a truth value that is true.
template <typename V>
bool present(const std::optional<V>& v) {
  return v.has_value();
}
template <Emptiable V>
bool present(const V& v) {
  return !v.empty();
}
template <std::same_as<bool> B>
bool present(B v) {
  return v;
}

template <typename>
struct MemberOf;
template <typename C, typename F>
struct MemberOf<F C::*> {
  using Class = C;
};
template <auto M>
using ClassOf = typename MemberOf<decltype(M)>::Class;

// The key `name` of field M, always written (an absent optional as null).
template <auto M>
Key<ClassOf<M>> field(const char* name) {
  using T = ClassOf<M>;
  return {name, [](const T& v) -> std::optional<ojson> { return put(v.*M); },
          [](const ojson& j, T& v) { get(j, v.*M); }};
}
// The key `name` of field M, written once it arises (see present()).
template <auto M>
Key<ClassOf<M>> arising(const char* name) {
  using T = ClassOf<M>;
  return {name,
          [](const T& v) -> std::optional<ojson> {
            if (!present(v.*M)) return std::nullopt;
            return put(v.*M);
          },
          [](const ojson& j, T& v) { get(j, v.*M); }};
}

template <typename T, size_t N>
using Keys = std::array<Key<T>, N>;

// Writes `v` by its keys, then the keys of `extra` it does not know.
template <typename T, size_t N>
ojson write_object(const Keys<T, N>& keys, const T& v, const ojson& extra = ojson::object()) {
  ojson j = ojson::object();
  for (const auto& k : keys)
    if (auto value = k.write(v)) j[k.name] = std::move(*value);
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it)
      if (!j.contains(it.key())) j[it.key()] = *it;
  return j;
}

// Reads object `j` into `v` by its keys (a key that is missing leaves its field at the
// default); gives back the keys it does not know, in their order.
template <typename T, size_t N>
ojson read_object(const Keys<T, N>& keys, const ojson& j, T& v) {
  ojson extra = ojson::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto k = std::find_if(keys.begin(), keys.end(),
                                [&](const Key<T>& key) { return it.key() == key.name; });
    if (k == keys.end())
      extra[it.key()] = *it;
    else if (k->read)
      k->read(*it, v);
  }
  return extra;
}

// ------------------------------------------------------------------------------------------
const Keys<RunSource, 4> kSourceKeys{{
    arising<&RunSource::kind>("kind"),
    arising<&RunSource::workflow>("workflow"),
    arising<&RunSource::name>("name"),
    arising<&RunSource::tasks_file>("tasks_file"),
}};

const Keys<RunOptionsRecord, 10> kOptionsKeys{{
    arising<&RunOptionsRecord::max_iterations>("max_iterations"),
    arising<&RunOptionsRecord::max_task_iterations>("max_task_iterations"),
    arising<&RunOptionsRecord::on_fail>("on_fail"),
    arising<&RunOptionsRecord::reanchor>("reanchor"),
    field<&RunOptionsRecord::max_tokens>("max_tokens"),
    field<&RunOptionsRecord::max_cost_usd>("max_cost_usd"),
    arising<&RunOptionsRecord::fresh_at>("fresh_at"),
    arising<&RunOptionsRecord::compact_at>("compact_at"),
    arising<&RunOptionsRecord::claude_bin>("claude_bin"),
    arising<&RunOptionsRecord::claude_args>("claude_args"),
}};

// A task of the tasks file: its id and title, then what it has of the rest.
const Keys<workflow::TaskSpec, 10> kSpecKeys{{
    field<&workflow::TaskSpec::id>("id"),
    field<&workflow::TaskSpec::title>("title"),
    arising<&workflow::TaskSpec::description>("description"),
    arising<&workflow::TaskSpec::acceptance>("acceptance"),
    arising<&workflow::TaskSpec::depends_on>("depends_on"),
    arising<&workflow::TaskSpec::done>("done"),
    arising<&workflow::TaskSpec::context_mode>("context_mode"),
    {"max_iterations",  // 0: the run's max_task_iterations
     [](const workflow::TaskSpec& t) -> std::optional<ojson> {
       if (t.max_iterations <= 0) return std::nullopt;
       return ojson(t.max_iterations);
     },
     [](const ojson& j, workflow::TaskSpec& t) {
       if (uint64_t n = 0; get(j, n))
         t.max_iterations = static_cast<int>(std::min<uint64_t>(n, 10000));
     }},
    arising<&workflow::TaskSpec::max_tokens>("max_tokens"),
    {"max_cost_usd",
     [](const workflow::TaskSpec& t) -> std::optional<ojson> {
       if (!t.max_cost_usd) return std::nullopt;
       return ojson(*t.max_cost_usd);
     },
     [](const ojson& j, workflow::TaskSpec& t) {
       if (double c = 0; get(j, c) && c >= 0) t.max_cost_usd = c;
     }},
}};

const Keys<StopRecord, 10> kStopKeys{{
    field<&StopRecord::scope>("scope"),
    arising<&StopRecord::budget>("budget"),
    arising<&StopRecord::limit>("limit"),
    arising<&StopRecord::spent>("spent"),
    arising<&StopRecord::over>("over"),
    arising<&StopRecord::task_id>("task_id"),
    arising<&StopRecord::kind>("kind"),
    arising<&StopRecord::message>("message"),
    arising<&StopRecord::why>("why"),
    arising<&StopRecord::reset_at>("reset_at"),
}};

const Keys<SessionRecord, 6> kSessionKeys{{
    field<&SessionRecord::id>("id"),
    field<&SessionRecord::task_key>("task_key"),
    field<&SessionRecord::anchor_epoch>("anchor_epoch"),
    field<&SessionRecord::anchor_file>("anchor_file"),
    arising<&SessionRecord::context_tokens>("context_tokens"),
    arising<&SessionRecord::context_window>("context_window"),
}};

const Keys<PendingAction, 3> kPendingKeys{{
    field<&PendingAction::key>("key"),
    field<&PendingAction::action>("action"),
    field<&PendingAction::focus>("focus"),
}};

const Keys<RefusedCall, 2> kRefusedKeys{{
    field<&RefusedCall::key>("key"),
    field<&RefusedCall::fresh>("fresh"),
}};

const Keys<claude::SessionTotals, 2> kTotalsKeys{{
    field<&claude::SessionTotals::usage>("usage"),
    field<&claude::SessionTotals::cost_usd>("cost_usd"),
}};

const Keys<TaskRecord, 16> kTaskKeys{{
    field<&TaskRecord::id>("id"),
    field<&TaskRecord::title>("title"),
    field<&TaskRecord::status>("status"),
    field<&TaskRecord::iterations>("iterations"),
    field<&TaskRecord::resets>("resets"),
    field<&TaskRecord::compactions>("compactions"),
    field<&TaskRecord::anchoring_tokens>("anchoring_tokens"),
    field<&TaskRecord::usage>("usage"),
    field<&TaskRecord::sessions>("sessions"),
    field<&TaskRecord::started_at_ms>("started_at_ms"),
    field<&TaskRecord::ended_at_ms>("ended_at_ms"),
    field<&TaskRecord::wall_ms>("wall_ms"),
    arising<&TaskRecord::context_mode>("context_mode"),
    arising<&TaskRecord::git_head>("git_head"),
    arising<&TaskRecord::cost_usd>("cost_usd"),
    arising<&TaskRecord::reason>("reason"),
}};

const Keys<RunState, 25> kRunKeys{{
    {"ctxkit", [](const RunState&) -> std::optional<ojson> { return ojson("run"); }, nullptr},
    {"version", [](const RunState&) -> std::optional<ojson> { return ojson(1); }, nullptr},
    field<&RunState::run_id>("run_id"),
    field<&RunState::project>("project"),
    field<&RunState::mode>("mode"),
    field<&RunState::mode_origin>("mode_origin"),
    field<&RunState::source>("source"),
    field<&RunState::status>("status"),
    field<&RunState::started_at_ms>("started_at_ms"),
    field<&RunState::ended_at_ms>("ended_at_ms"),
    field<&RunState::iterations>("iterations"),
    field<&RunState::session>("session"),
    field<&RunState::previous_summary>("previous_summary"),
    field<&RunState::attempts>("attempts"),
    field<&RunState::pending_action>("pending_action"),
    field<&RunState::usage>("usage"),
    field<&RunState::tokens_total>("tokens_total"),
    field<&RunState::cost_usd>("cost_usd"),
    field<&RunState::options>("options"),
    field<&RunState::task_specs>("task_specs"),
    field<&RunState::tasks>("tasks"),
    arising<&RunState::session_totals>("session_totals"),
    arising<&RunState::stopped_on>("stopped_on"),
    arising<&RunState::refused_call>("refused_call"),
    arising<&RunState::run_session>("run_session"),
}};

// ------------------------------------------------------------------------------------------
// A record with `extra` keeps the keys its table does not know; the others drop them.
template <typename T, size_t N>
bool get_object(const Keys<T, N>& keys, const ojson& j, T& v) {
  if (!j.is_object()) return false;
  if constexpr (requires { v.extra; })
    v.extra = read_object(keys, j, v);
  else
    read_object(keys, j, v);
  return true;
}
template <typename T, size_t N>
ojson put_object(const Keys<T, N>& keys, const T& v) {
  if constexpr (requires { v.extra; })
    return write_object(keys, v, v.extra);
  else
    return write_object(keys, v);
}

ojson put(const RunSource& v) {
  return put_object(kSourceKeys, v);
}
ojson put(const RunOptionsRecord& v) {
  return put_object(kOptionsKeys, v);
}
ojson put(const TaskSpecRecord& v) {
  return write_object(kSpecKeys, v.spec, v.extra);
}
ojson put(const StopRecord& v) {
  return put_object(kStopKeys, v);
}
ojson put(const SessionRecord& v) {
  return put_object(kSessionKeys, v);
}
ojson put(TaskStatus v) {
  return to_string(v);
}
bool get(const ojson& j, TaskStatus& v) {
  if (!j.is_string()) return false;
  v = parse_task_status(j.get_ref<const std::string&>()).value_or(TaskStatus::Pending);
  return true;
}
ojson put(workflow::ContextAction v) {
  return workflow::to_string(v);
}
bool get(const ojson& j, workflow::ContextAction& v) {
  if (!j.is_string()) return false;
  v = j.get_ref<const std::string&>() == "clear" ? workflow::ContextAction::Clear
                                                 : workflow::ContextAction::Compact;
  return true;
}
ojson put(const PendingAction& v) {
  return put_object(kPendingKeys, v);
}
ojson put(const RefusedCall& v) {
  return put_object(kRefusedKeys, v);
}
ojson put(const TaskRecord& v) {
  return put_object(kTaskKeys, v);
}
ojson put(const claude::SessionTotals& v) {
  return put_object(kTotalsKeys, v);
}
bool get(const ojson& j, RunSource& v) {
  return get_object(kSourceKeys, j, v);
}
bool get(const ojson& j, RunOptionsRecord& v) {
  return get_object(kOptionsKeys, j, v);
}
bool get(const ojson& j, TaskSpecRecord& v) {
  if (!j.is_object()) return false;
  v.extra = read_object(kSpecKeys, j, v.spec);
  return true;
}
bool get(const ojson& j, StopRecord& v) {
  return get_object(kStopKeys, j, v);
}
bool get(const ojson& j, SessionRecord& v) {
  return get_object(kSessionKeys, j, v);
}
bool get(const ojson& j, PendingAction& v) {
  return get_object(kPendingKeys, j, v);
}
bool get(const ojson& j, RefusedCall& v) {
  return get_object(kRefusedKeys, j, v);
}
bool get(const ojson& j, TaskRecord& v) {
  return get_object(kTaskKeys, j, v);
}
bool get(const ojson& j, claude::SessionTotals& v) {
  return get_object(kTotalsKeys, j, v);
}
ojson put(const RunState& v) {
  return put_object(kRunKeys, v);
}
bool get(const ojson& j, RunState& v) {
  return get_object(kRunKeys, j, v);
}

// attempts: {position: count}, an entry that is not an integer left out.
ojson put(const std::map<std::string, int>& v) {
  ojson out = ojson::object();
  for (const auto& [key, n] : v) out[key] = n;
  return out;
}
bool get(const ojson& j, std::map<std::string, int>& v) {
  if (!j.is_object()) return false;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (int n = 0; get(*it, n)) v[it.key()] = n;
  return true;
}
// session_totals: {session id: totals}, an entry that is not an object left out.
ojson put(const std::map<std::string, claude::SessionTotals>& v) {
  ojson out = ojson::object();
  for (const auto& [id, totals] : v) out[id] = put(totals);
  return out;
}
bool get(const ojson& j, std::map<std::string, claude::SessionTotals>& v) {
  if (!j.is_object()) return false;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (claude::SessionTotals t; get(*it, t)) v[it.key()] = t;
  return true;
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
  auto count = [&](const char* key) {
    uint64_t n = 0;
    if (const auto it = j.find(key); it != j.end()) get(*it, n);
    return n;
  };
  return {count("input"), count("cache_creation"), count("cache_read"), count("output")};
}

ojson source_json(const RunSource& source) {
  return put(source);
}
ojson stop_json(const StopRecord& stop) {
  return put(stop);
}

ojson run_state_json(const RunState& s) {
  return put(s);
}

RunState run_state_from_json(const ojson& j) {
  RunState s;
  get(j, s);
  return s;
}

const char* to_string(TaskStatus s) {
  switch (s) {
    case TaskStatus::Pending:
      return "pending";
    case TaskStatus::Running:
      return "running";
    case TaskStatus::Done:
      return "done";
    case TaskStatus::Skipped:
      return "skipped";
    case TaskStatus::Failed:
      return "failed";
  }
  return "pending";
}

std::optional<TaskStatus> parse_task_status(std::string_view word) {
  for (auto s : {TaskStatus::Pending, TaskStatus::Running, TaskStatus::Done, TaskStatus::Skipped,
                 TaskStatus::Failed})
    if (word == to_string(s)) return s;
  return std::nullopt;
}

}  // namespace ctxkit::runner
