#include <gtest/gtest.h>

#include "runner/run_record.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::runner {
namespace {
namespace fs = std::filesystem;

// A task id becomes one path component below tasks/: never a way out of the run's folder.
TEST(RunRecord, SafeNameIsOnePathComponentThatStaysInside) {
  EXPECT_EQ(RunRecord::safe_name("t1"), "t1");
  EXPECT_EQ(RunRecord::safe_name("fix-the_parser.v2"), "fix-the_parser.v2");
  EXPECT_EQ(RunRecord::safe_name(".."), "_");
  EXPECT_EQ(RunRecord::safe_name("."), "_");
  EXPECT_EQ(RunRecord::safe_name(""), "_");
  EXPECT_EQ(RunRecord::safe_name("a/b"), "a_b");
  EXPECT_EQ(RunRecord::safe_name("../x"), ".._x");
  EXPECT_EQ(RunRecord::safe_name("/etc/passwd"), "_etc_passwd");
  EXPECT_EQ(RunRecord::safe_name("a\\b c\nd"), "a_b_c_d");
  EXPECT_EQ(RunRecord::safe_name("t\xc3\xa9"), "t__");  // each byte outside the set
  EXPECT_EQ(RunRecord::safe_name(std::string(300, 'x')), std::string(128, 'x'));
}

TEST(RunRecord, FilesOfOddTaskIdsLandInTheirOwnFolderInsideTheRun) {
  test::TempDir tmp;
  const fs::path runs = tmp / "proj/.ctxkit/runs";
  RunState state;
  state.run_id = "r1";
  RunRecord rec(runs / "r1", state);
  ASSERT_TRUE(rec.create().has_value()) << "the run folder";
  for (const std::string id : {"..", "../x", "a/b", "."}) {
    auto w = rec.write_file("tasks/" + RunRecord::safe_name(id) + "/summary.md", id);
    ASSERT_TRUE(w) << id << ": " << w.error().message;
  }
  EXPECT_EQ(test::read_file(runs / "r1/tasks/_/summary.md"),
            ".");  // ".." then "." into the same "_"
  EXPECT_EQ(test::read_file(runs / "r1/tasks/.._x/summary.md"), "../x");
  EXPECT_EQ(test::read_file(runs / "r1/tasks/a_b/summary.md"), "a/b");
  EXPECT_FALSE(fs::exists(runs / "r1/summary.md"));
  EXPECT_FALSE(fs::exists(runs / "r1/x"));
  EXPECT_FALSE(fs::exists(runs / "r1/tasks/a"));
}

// The project folder is the user's: it may be reached through a link and keeps its mode; the
// folders ctxkit makes in it are private and never links.
TEST(RunRecord, TheProjectFolderIsTheUsersCtxkitsFolderInItIsPrivate) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/proj");
  fs::permissions(tmp / "data/proj", fs::perms(0755));
  fs::create_directory_symlink(tmp / "data/proj", tmp / "proj");
  RunState state;
  state.run_id = "r1";
  RunRecord rec(tmp / "proj/.ctxkit/runs/r1", state);
  auto made = rec.create();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(fs::status(tmp / "data/proj").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(tmp / "data/proj/.ctxkit").permissions(), fs::perms(0700));
  EXPECT_EQ(fs::status(tmp / "data/proj/.ctxkit/runs/r1").permissions(), fs::perms(0700));

  fs::create_directories(tmp / "elsewhere");
  fs::create_directories(tmp / "proj3");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "proj3/.ctxkit");
  RunRecord linked(tmp / "proj3/.ctxkit/runs/r1", state);
  EXPECT_FALSE(linked.create());
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
}

}  // namespace
}  // namespace ctxkit::runner
