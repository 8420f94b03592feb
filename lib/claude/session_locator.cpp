#include "claude/session_locator.hpp"

#include <fmt/core.h>

#include <cctype>
#include <thread>

#include "core/project_folder.hpp"

namespace ctxkit::claude {
namespace fs = std::filesystem;

bool looks_like_session_id(std::string_view s) {
  if (s.size() < 8 || s.size() > 64) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

namespace {
// The most recently written <id>.jsonl in any project folder, or an empty path.
fs::path newest_transcript(const fs::path& projects, const std::string& id) {
  std::error_code ec;
  fs::path best;
  fs::file_time_type best_time{};
  for (auto it = fs::directory_iterator(projects, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    fs::path candidate = it->path() / (id + ".jsonl");
    if (!fs::is_regular_file(candidate, ec)) continue;
    auto t = fs::last_write_time(candidate, ec);
    if (best.empty() || t > best_time) {
      best = candidate;
      best_time = t;
    }
  }
  return best;
}
}  // namespace

Result<fs::path> locate_session(const std::string& what_in, const util::Env& env,
                                const core::Locations& loc,
                                std::chrono::milliseconds current_wait) {
  std::string what = what_in;
  if (what.empty()) {
    auto id = env.get_nonempty("CLAUDE_CODE_SESSION_ID");
    if (!id)
      return fail(
          "no session given and $CLAUDE_CODE_SESSION_ID is not set (pass a session id or a "
          "transcript path)",
          Error::Kind::Invalid);
    what = *id;
  }
  std::error_code ec;
  if (what.find('/') != std::string::npos || what.ends_with(".jsonl")) {
    fs::path p(what);
    if (!fs::exists(p, ec))
      return fail(fmt::format("no transcript at {}", p.string()), Error::Kind::NotFound);
    if (!fs::is_regular_file(p, ec))
      return fail(fmt::format("{} is not a file", p.string()), Error::Kind::Invalid);
    return fs::absolute(p, ec);
  }
  if (!looks_like_session_id(what))
    return fail(fmt::format("'{}' is neither a session id nor a transcript path", what),
                Error::Kind::Invalid);
  const fs::path projects = loc.claude_projects_dir();
  fs::path best = newest_transcript(projects, what);
  if (best.empty() && what_in.empty()) {
    const auto deadline = std::chrono::steady_clock::now() + current_wait;
    while (best.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      best = newest_transcript(projects, what);
    }
  }
  if (best.empty())
    return fail(fmt::format("no session {} in {}", what, projects.string()), Error::Kind::NotFound);
  return best;
}

std::optional<std::filesystem::path> newest_project_transcript(
    const core::Locations& loc, const std::filesystem::path& project) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  const fs::path folder = loc.claude_projects_dir() / core::project_folder_name(project.string());
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.path().extension() != ".jsonl" || !e.is_regular_file(ec)) continue;
    const auto t = e.last_write_time(ec);
    if (ec) continue;
    if (!newest || t > newest_time) {
      newest = e.path();
      newest_time = t;
    }
  }
  return newest;
}

}  // namespace ctxkit::claude
