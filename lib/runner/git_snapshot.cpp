#include "runner/git_snapshot.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <string_view>

#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;

namespace {
bool is_commit_id(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The run records ctx-run writes under <project>/.ctxkit/runs: every iteration adds files there.
const std::string kTop = ":(top)", kNotRuns = ":(exclude).ctxkit/runs";

bool under(std::string_view name, std::string_view folder) {
  return name.starts_with(folder);
}

// One path of git's output at the front of `text`, taken off it: as it is, or in double quotes
// with C escapes (\" \\ \t \n ... and \ooo bytes) when git quoted it. Unquoted, it ends at
// `stop` (" -> " between the two names of a rename) or at the end.
std::string take_path(std::string_view& text, std::string_view stop) {
  std::string out;
  if (!text.starts_with('"')) {
    const size_t end = stop.empty() ? std::string_view::npos : text.find(stop);
    out = std::string(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
    return out;
  }
  size_t i = 1;
  for (; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    if (c >= '0' && c <= '7' && i + 2 < text.size()) {
      out += static_cast<char>(((c - '0') << 6) | ((text[i + 1] - '0') << 3) | (text[i + 2] - '0'));
      i += 2;
      continue;
    }
    switch (c) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'v':
        out += '\v';
        break;
      case 'f':
        out += '\f';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        out += c;
    }
  }
  text.remove_prefix(std::min(i + 1, text.size()));
  return out;
}

// A name as a summary shows it: control characters become '?'.
std::string shown(std::string name) {
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return name;
}
}  // namespace

std::optional<std::string> run_git(const fs::path& dir, std::vector<std::string> args) {
  util::ProcessSpec spec;
  spec.argv = {"git", "-C", dir.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::milliseconds(5000);
  auto r = util::run_process(spec);
  if (!r || r->exit_code != 0 || r->timed_out) return std::nullopt;
  return std::move(r->out);
}

GitSnapshot take_git_snapshot(const fs::path& dir, const std::string& since) {
  auto status_future = std::async(std::launch::async, [&dir] {
    return run_git(dir, {"--no-optional-locks", "status", "--porcelain", "--branch",
                         "--untracked-files=normal", "--", kTop, kNotRuns});
  });
  std::future<std::optional<std::string>> diff_future;
  if (is_commit_id(since))
    diff_future = std::async(std::launch::async, [&dir, &since] {
      return run_git(dir, {"diff", "--name-only", since, "HEAD", "--", kTop, kNotRuns});
    });
  auto log = run_git(dir, {"log", "-3", "--format=%H %h %s"});
  auto status = status_future.get();
  std::optional<std::string> diff = diff_future.valid() ? diff_future.get() : std::nullopt;

  GitSnapshot s;
  if (!status) return s;
  s.in_repo = true;
  s.branch = "HEAD";
  const auto lines = util::split_lines(*status);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (i == 0 && line.starts_with("## ")) {
      line.remove_prefix(3);
      if (line.starts_with("No commits yet on "))
        line.remove_prefix(18);
      else if (line.starts_with("Initial commit on "))
        line.remove_prefix(18);
      s.branch = std::string(line.substr(0, std::min(line.find("..."), line.find(' '))));
      continue;
    }
    if (line.size() <= 3) continue;
    std::string_view rest = line.substr(3);
    std::string name = take_path(rest, " -> ");
    if (rest.starts_with(" -> ")) {  // a rename: the new name counts
      rest.remove_prefix(4);
      name = take_path(rest, "");
    }
    s.uncommitted.push_back(std::move(name));
  }
  if (log) {
    for (auto line : util::split_lines(*log)) {
      const size_t sp = line.find(' ');
      if (sp == std::string_view::npos) continue;
      if (s.head.empty()) s.head = std::string(line.substr(0, sp));
      std::string_view rest = line.substr(sp + 1);
      while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
      s.last_commits += std::string(rest) + "\n";
    }
  }
  if (diff) {
    s.since = since;
    for (auto line : util::split_lines(*diff))
      if (!line.empty()) s.committed_since.push_back(take_path(line, ""));
  }
  return s;
}

std::string render_git_state(const GitSnapshot& s) {
  if (!s.in_repo) return {};
  size_t changed = 0;
  for (const auto& name : s.uncommitted)
    if (!under(name, ".ctxkit/")) ++changed;
  std::string out = fmt::format("Branch: {}\nUncommitted files: {}\n", s.branch, changed);
  if (!s.last_commits.empty()) out += "Last commits:\n" + s.last_commits;
  return out;
}

std::vector<std::string> changed_files(const GitSnapshot& s) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (const auto* list : {&s.committed_since, &s.uncommitted})
    for (const auto& name : *list)
      if (!under(name, ".ctxkit/runs/") && name != ".ctxkit/" && seen.insert(name).second)
        out.push_back(shown(name));
  return out;
}

std::string git_state(const fs::path& dir) {
  return render_git_state(take_git_snapshot(dir));
}

std::optional<GitFingerprint> git_fingerprint(const fs::path& dir) {
  for (const char* v :
       {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"})
    if (std::getenv(v)) return std::nullopt;
  std::error_code ec;
  // Through links, as git finds the repository (a project that is a link into a repository).
  fs::path p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return std::nullopt;
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "a/b/" is "a/b"
  GitFingerprint f;
  struct stat st {};
  fs::path dotgit;
  while (true) {
    if (::stat((p / ".git").c_str(), &st) == 0) {
      dotgit = p / ".git";
      break;
    }
    if (!p.has_relative_path()) return f;  // outside any repository
    p = p.parent_path();
  }
  f.git = dotgit.string();
  fs::path gitdir = dotgit, common = dotgit;
  if (S_ISREG(st.st_mode)) {  // a worktree: "gitdir: <path>"
    auto text = util::read_file(dotgit, {4096, true});
    if (!text || !text->starts_with("gitdir: ")) return std::nullopt;
    std::string target = text->substr(8);
    while (!target.empty() && (target.back() == '\n' || target.back() == '\r')) target.pop_back();
    gitdir = fs::path(target).is_absolute() ? fs::path(target) : p / target;
    common = gitdir;
    if (auto c = util::read_file(gitdir / "commondir", {4096, true})) {
      std::string rel = *c;
      while (!rel.empty() && (rel.back() == '\n' || rel.back() == '\r')) rel.pop_back();
      common = fs::path(rel).is_absolute() ? fs::path(rel) : gitdir / rel;
    }
  }
  auto head = util::read_file(gitdir / "HEAD", {4096, true});
  f.head = head ? *head : std::string();
  std::vector<fs::path> files = {gitdir / "index", common / "packed-refs",
                                 common / "reftable" / "tables.list"};
  if (f.head.starts_with("ref: ")) {
    std::string ref = f.head.substr(5);
    while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r')) ref.pop_back();
    if (ref.find("..") == std::string::npos) files.push_back(common / ref);
  }
  for (const auto& file : files) {
    struct stat fs_st {};
    if (::stat(file.c_str(), &fs_st) != 0) {
      f.files.push_back({0, 0, 0, 0, 0});
      continue;
    }
    f.files.push_back({1, static_cast<int64_t>(fs_st.st_ino), static_cast<int64_t>(fs_st.st_size),
                       fs_st.st_mtim.tv_sec * 1000000000LL + fs_st.st_mtim.tv_nsec,
                       fs_st.st_ctim.tv_sec * 1000000000LL + fs_st.st_ctim.tv_nsec});
  }
  return f;
}

GitPrefetch::~GitPrefetch() {
  clear();
}

void GitPrefetch::clear() {
  if (pending_.valid()) pending_.wait();
  pending_ = {};
  ready_.reset();
  before_.reset();
}

void GitPrefetch::start(const fs::path& dir, const std::string& since) {
  clear();
  before_ = git_fingerprint(dir);
  if (!before_) return;
  dir_ = dir;
  since_ = is_commit_id(since) ? since : std::string();
  pending_ =
      std::async(std::launch::async, [dir, s = since_] { return take_git_snapshot(dir, s); });
}

GitSnapshot GitPrefetch::get(const fs::path& dir, const std::optional<std::string>& since) {
  if (pending_.valid()) ready_ = pending_.get();
  const std::string want = since && is_commit_id(*since) ? *since : std::string();
  if (ready_ && before_ && dir == dir_ && (!since || want == since_)) {
    if (auto now = git_fingerprint(dir); now && *now == *before_) {
      ++reused_;
      return *ready_;
    }
  }
  // Asked now, and kept for the next get() until the repository moves or clear().
  before_ = git_fingerprint(dir);
  dir_ = dir;
  since_ = want;
  ready_ = take_git_snapshot(dir, want);
  if (!before_) {
    GitSnapshot s = std::move(*ready_);
    ready_.reset();
    return s;
  }
  return *ready_;
}

}  // namespace ctxkit::runner
