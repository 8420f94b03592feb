#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

namespace ctxkit::runner {

// What the runner asks git about a project (by argv, never a shell): the anchor's git state and
// a hybrid task summary's changed files both come from one snapshot.

// `git -C dir ARGS…` (5 s at most): its stdout, or nullopt when git is missing, fails or times out.
std::optional<std::string> run_git(const std::filesystem::path& dir, std::vector<std::string> args);

struct GitSnapshot {
  bool in_repo = false;                  // `dir` is in a git work tree
  std::string branch;                    // "HEAD" when detached
  std::string head;                      // the commit checked out; empty before the first one
  std::vector<std::string> uncommitted;  // changed files and untracked ones (an untracked folder
                                         // once, as "dir/"), unquoted
  std::string last_commits;              // "<short id> <subject>" lines, newest first, at most 3
  std::string since;                     // the commit committed_since counts from (asked for)
  std::vector<std::string> committed_since;  // files changed in commits since `since`
};

// Asks git now: `status --porcelain --branch` and `log -3` at once, and
// `diff --name-only since HEAD` with them when `since` is a commit id. Status never takes the
// index lock (--no-optional-locks), so it can run beside other git users.
GitSnapshot take_git_snapshot(const std::filesystem::path& dir, const std::string& since = {});

// The anchor's git section: branch, count of uncommitted files leaving out the runner's own
// records under .ctxkit/, the last commits. Empty outside a work tree.
std::string render_git_state(const GitSnapshot& s);
// A summary's files: committed since `since`, then uncommitted, without repeats, leaving out
// the run records under .ctxkit/runs; control characters in a name are shown as '?'.
std::vector<std::string> changed_files(const GitSnapshot& s);

// render_git_state of a snapshot taken now.
std::string git_state(const std::filesystem::path& dir);

// What tells, without running git, whether a snapshot may be out of date: the repository found
// from `dir` (.git, a folder or a worktree's file), HEAD's text, and the identity (inode, size,
// modification and change times) of the index, the branch's ref and packed-refs. Anything git
// does to commits, branches or the index changes it; edits of the work tree alone do not.
struct GitFingerprint {
  std::string git;   // the .git found, empty outside a repository
  std::string head;  // HEAD's content
  std::vector<std::array<int64_t, 5>> files;
  bool operator==(const GitFingerprint&) const = default;
};
// nullopt when it cannot be told (GIT_DIR or GIT_WORK_TREE set, a .git file that cannot be read).
std::optional<GitFingerprint> git_fingerprint(const std::filesystem::path& dir);

// A snapshot asked for ahead of need: the runner starts one when the client prints its result,
// so that git runs while the client is still exiting. get() hands it over only for the same
// directory (and `since`, when the caller needs committed_since) and while the fingerprint taken
// before git started still holds; otherwise it asks git now. The work tree as git last saw it is
// kept until clear(), which the runner calls before each client call.
class GitPrefetch {
 public:
  GitPrefetch() = default;
  GitPrefetch(const GitPrefetch&) = delete;
  GitPrefetch& operator=(const GitPrefetch&) = delete;
  ~GitPrefetch();

  // Starts asking git in the background (nothing when the fingerprint cannot be told).
  void start(const std::filesystem::path& dir, const std::string& since);
  // The snapshot of `dir`; `since` set: committed_since must count from it.
  GitSnapshot get(const std::filesystem::path& dir,
                  const std::optional<std::string>& since = std::nullopt);
  // Forgets what it has (waiting for a snapshot still being taken).
  void clear();
  // How many get() calls were answered from a snapshot taken ahead (for the tests).
  int reused() const { return reused_; }

 private:
  std::filesystem::path dir_;
  std::string since_;
  std::optional<GitFingerprint> before_;
  std::future<GitSnapshot> pending_;
  std::optional<GitSnapshot> ready_;
  int reused_ = 0;
};

}  // namespace ctxkit::runner
