#include "runner/run_record.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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
  return RunRecord(folder, std::move(state));
}

Result<void> RunRecord::create() {
  std::error_code ec;
  if (fs::exists(folder_, ec)) return fail(fmt::format("{} already exists", folder_.string()));
  if (auto r = util::make_private_dirs(folder_, project_of(folder_)); !r) return r;
  return save();
}

Result<void> RunRecord::save() {
  return util::write_file_atomic(file(),
                                 state.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n",
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

ojson RunRecord::new_task(const std::string& id, const std::string& title,
                          const std::string& status) {
  return {{"id", id},
          {"title", title},
          {"status", status},
          {"iterations", 0},
          {"resets", 0},
          {"compactions", 0},
          {"anchoring_tokens", 0},
          {"usage", {{"input", 0}, {"cache_creation", 0}, {"cache_read", 0}, {"output", 0}}},
          {"sessions", ojson::array()},
          {"started_at_ms", nullptr},
          {"ended_at_ms", nullptr},
          {"wall_ms", 0}};
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

}  // namespace ctxkit::runner
