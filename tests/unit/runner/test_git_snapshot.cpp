#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "runner/git_snapshot.hpp"
#include "unit/temp_dir.hpp"
#include "util/process.hpp"

namespace ctxkit::runner {
namespace {
namespace fs = std::filesystem;

// git in `dir` by argv, with an identity and a default branch of its own; the test fails when it
// does.
void git(const fs::path& dir, std::vector<std::string> args) {
  util::ProcessSpec spec;
  spec.argv = {"git",
               "-c",
               "user.name=t",
               "-c",
               "user.email=t@example.com",
               "-c",
               "init.defaultBranch=trunk",
               "-C",
               dir.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto r = util::run_process(spec);
  ASSERT_TRUE(r && r->exit_code == 0) << (r ? r->err : r.error().message);
}

struct Repo {
  test::TempDir dir;
  Repo() {
    // Whatever the machine's git configuration says (signing, hooks, quoting).
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    git(dir.path(), {"init", "-q"});
    dir.write("a.txt", "a\n");
    git(dir.path(), {"add", "a.txt"});
    git(dir.path(), {"commit", "-q", "-m", "first commit"});
  }
  fs::path path() const { return dir.path(); }
};

TEST(GitSnapshot, HeadBranchFilesAndCommits) {
  Repo repo;
  const std::string first = take_git_snapshot(repo.path()).head;
  ASSERT_EQ(first.size(), 40u);
  repo.dir.write("b.txt", "b\n");
  git(repo.path(), {"add", "b.txt"});
  git(repo.path(), {"commit", "-q", "-m", "second commit"});
  repo.dir.write("a.txt", "changed\n");
  repo.dir.write("new/one.txt", "1\n");  // an untracked folder: once
  repo.dir.write("new/two.txt", "2\n");
  repo.dir.write(".ctxkit/runs/r1/run.json", "{}");
  repo.dir.write(".ctxkit/workflow.json", "{}");

  const GitSnapshot s = take_git_snapshot(repo.path(), first);
  EXPECT_TRUE(s.in_repo);
  EXPECT_EQ(s.branch, "trunk");
  EXPECT_NE(s.head, first);
  EXPECT_EQ(s.head.size(), 40u);
  EXPECT_EQ(s.since, first);
  EXPECT_EQ(s.committed_since, std::vector<std::string>{"b.txt"});
  // The run records are not even listed; the rest of .ctxkit/ is, but neither counted by the
  // anchor nor shown in a summary.
  EXPECT_EQ(s.uncommitted, (std::vector<std::string>{"a.txt", ".ctxkit/", "new/"}));
  EXPECT_EQ(
      render_git_state(s).substr(0, 63),
      "Branch: trunk\nUncommitted files: 2\nLast commits:\n" + s.head.substr(0, 7) + " second");
  EXPECT_NE(render_git_state(s).find(" first commit\n"), std::string::npos);
  EXPECT_EQ(changed_files(s), (std::vector<std::string>{"b.txt", "a.txt", "new/"}));
  // A subfolder sees the whole repository.
  EXPECT_EQ(changed_files(take_git_snapshot(repo.path() / "new", first)), changed_files(s));
  // Not a commit id: no diff asked.
  EXPECT_TRUE(take_git_snapshot(repo.path(), "HEAD~1; rm -rf /").committed_since.empty());
}

// Names git quotes (spaces, control characters, quotes) come back as they are; a renamed file
// counts under its new name; a name committed and then changed again is listed once.
TEST(GitSnapshot, QuotedNamesAndRenames) {
  Repo repo;
  const std::string first = take_git_snapshot(repo.path()).head;
  repo.dir.write("sp ace.txt", "1\n");
  repo.dir.write("old name.txt", "2\n");
  git(repo.path(), {"add", "sp ace.txt", "old name.txt"});
  git(repo.path(), {"commit", "-q", "-m", "names"});
  git(repo.path(), {"mv", "old name.txt", "new \"name\".txt"});
  repo.dir.write("sp ace.txt", "changed\n");
  repo.dir.write("tab\there.txt", "3\n");
  const GitSnapshot s = take_git_snapshot(repo.path(), first);
  EXPECT_EQ(s.uncommitted,
            (std::vector<std::string>{"new \"name\".txt", "sp ace.txt", "tab\there.txt"}));
  EXPECT_EQ(s.committed_since, (std::vector<std::string>{"old name.txt", "sp ace.txt"}));
  EXPECT_EQ(changed_files(s), (std::vector<std::string>{"old name.txt", "sp ace.txt",
                                                        "new \"name\".txt", "tab?here.txt"}));
}

TEST(GitSnapshot, OutsideARepositoryIsEmpty) {
  test::TempDir dir;
  const GitSnapshot s = take_git_snapshot(dir.path());
  EXPECT_FALSE(s.in_repo);
  EXPECT_EQ(render_git_state(s), "");
  auto f = git_fingerprint(dir.path());
  // /tmp-like folders are not in a repository (if the machine's are, the test says nothing of it).
  if (f && f->git.empty()) {
    EXPECT_EQ(f->files.size(), 0u);
  }
}

TEST(GitSnapshot, FingerprintMovesWithCommitsBranchesAndTheIndexNotWithTheWorkTree) {
  Repo repo;
  auto before = git_fingerprint(repo.path());
  ASSERT_TRUE(before);
  EXPECT_EQ(before->git, (repo.path() / ".git").string());
  repo.dir.write("a.txt", "edited only\n");
  EXPECT_EQ(git_fingerprint(repo.path()), before);  // the work tree alone
  EXPECT_EQ(git_fingerprint(repo.path() / ".git" / ".."), before);
  // A link to a folder of the repository finds the same repository.
  test::TempDir links;
  fs::create_directory(repo.path() / "sub");
  fs::create_directory_symlink(repo.path() / "sub", links / "sub-link");
  EXPECT_EQ(git_fingerprint(links / "sub-link"), before);
  git(repo.path(), {"add", "a.txt"});
  auto staged = git_fingerprint(repo.path());
  EXPECT_NE(staged, before);
  git(repo.path(), {"commit", "-q", "-m", "two"});
  auto committed = git_fingerprint(repo.path());
  EXPECT_NE(committed, staged);
  git(repo.path(), {"checkout", "-q", "-b", "other"});
  EXPECT_NE(git_fingerprint(repo.path()), committed);
}

TEST(GitSnapshot, FingerprintOfAWorktreeFollowsItsOwnHeadAndTheSharedRefs) {
  Repo repo;
  test::TempDir other;
  const fs::path wt = other / "wt";
  git(repo.path(), {"worktree", "add", "-q", "-b", "side", wt.string()});
  auto before = git_fingerprint(wt);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->git, (wt / ".git").string());
  EXPECT_EQ(before->head, "ref: refs/heads/side\n");
  // The branch moved from the main work tree: the worktree's own files stay as they were, the
  // ref in the shared folder does not.
  repo.dir.write("b.txt", "b\n");
  git(repo.path(), {"add", "b.txt"});
  git(repo.path(), {"commit", "-q", "-m", "on trunk"});
  EXPECT_EQ(git_fingerprint(wt), before);
  git(repo.path(), {"update-ref", "refs/heads/side", "trunk"});
  auto moved = git_fingerprint(wt);
  EXPECT_NE(moved, before);
  other.write("wt/c.txt", "c\n");
  git(wt, {"add", "c.txt"});
  EXPECT_NE(git_fingerprint(wt), moved);
}

TEST(GitSnapshot, NoFingerprintWhenGitIsPointedElsewhere) {
  Repo repo;
  ::setenv("GIT_DIR", (repo.path() / ".git").c_str(), 1);
  EXPECT_FALSE(git_fingerprint(repo.path()));
  ::unsetenv("GIT_DIR");
  EXPECT_TRUE(git_fingerprint(repo.path()));
}

TEST(GitPrefetch, AnswersFromTheSnapshotTakenAheadWhileTheRepositoryHasNotMoved) {
  Repo repo;
  GitPrefetch p;
  p.start(repo.path(), "");
  repo.dir.write("later.txt", "written after the snapshot\n");  // the work tree alone: not seen
  const GitSnapshot a = p.get(repo.path());
  EXPECT_EQ(p.reused(), 1);
  const GitSnapshot b = p.get(repo.path());
  EXPECT_EQ(p.reused(), 2);
  EXPECT_EQ(a.head, b.head);
  EXPECT_EQ(a.uncommitted, b.uncommitted);
  // After clear() (the runner's next client call) git is asked again.
  p.clear();
  EXPECT_EQ(p.get(repo.path()).uncommitted, std::vector<std::string>{"later.txt"});
  EXPECT_EQ(p.reused(), 2);
}

TEST(GitPrefetch, AsksAgainWhenTheRepositoryMovedSinceItStarted) {
  Repo repo;
  GitPrefetch p;
  const std::string first = take_git_snapshot(repo.path()).head;
  p.start(repo.path(), first);
  // A commit after the client's result (a SessionEnd hook, say).
  repo.dir.write("b.txt", "b\n");
  git(repo.path(), {"add", "b.txt"});
  git(repo.path(), {"commit", "-q", "-m", "after the result"});
  const GitSnapshot s = p.get(repo.path(), first);
  EXPECT_EQ(p.reused(), 0);
  EXPECT_NE(s.head, first);
  EXPECT_NE(render_git_state(s).find(" after the result\n"), std::string::npos);
  EXPECT_EQ(s.committed_since, std::vector<std::string>{"b.txt"});
  // What it asked now is kept for the next get().
  EXPECT_EQ(p.get(repo.path()).head, s.head);
  EXPECT_EQ(p.reused(), 1);
}

TEST(GitPrefetch, AsksAgainForAnotherFolderOrAnotherStartingCommit) {
  Repo repo, other;
  GitPrefetch p;
  const std::string first = take_git_snapshot(repo.path()).head;
  p.start(repo.path(), "");
  EXPECT_EQ(p.get(other.path()).head, take_git_snapshot(other.path()).head);
  EXPECT_EQ(p.reused(), 0);
  p.start(repo.path(), "");
  EXPECT_TRUE(p.get(repo.path(), first).since == first);  // committed_since asked from `first`
  EXPECT_EQ(p.reused(), 0);
  EXPECT_EQ(p.get(repo.path(), first).since, first);
  EXPECT_EQ(p.reused(), 1);
}

}  // namespace
}  // namespace ctxkit::runner
