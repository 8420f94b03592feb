#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "unit/temp_dir.hpp"
#include "workflow/workflow_events.hpp"

namespace ctxkit::workflow {
namespace {
namespace fs = std::filesystem;

WorkflowEvent cleared() {
  WorkflowEvent e;
  e.kind = "context_action";
  e.action = "clear";
  e.workflow = "w";
  e.step = "s";
  return e;
}

TEST(WorkflowEvents, AppendedAndReadBackPerWorktree) {
  test::TempDir tmp;
  fs::path file = tmp / "state/state.db";
  EXPECT_TRUE(read_events(file, 1000, "/wt/a").empty());  // no database yet
  ASSERT_TRUE(append_event(file, 1000, "/wt/a", cleared()));
  ASSERT_TRUE(append_event(file, 1000, "/wt/b", cleared()));
  auto a = read_events(file, 1000, "/wt/a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].event.action, "clear");
  EXPECT_EQ(a[0].event.step, "s");
}

TEST(WorkflowEvents, TheFolderIsPrivateWhateverTheUmask) {
  test::TempDir tmp;
  fs::path file = tmp / "state/deep/state.db";
  mode_t old = ::umask(0);
  auto r = append_event(file, 1000, "/wt", cleared());
  ::umask(old);
  ASSERT_TRUE(r) << r.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(WorkflowEvents, ALinkInPlaceOfTheFileIsNotFollowed) {
  test::TempDir tmp;
  fs::create_directories(tmp / "state");
  fs::permissions(tmp / "state", fs::perms::owner_all, fs::perm_options::replace);
  fs::path target = tmp.write("elsewhere.txt", "keep me\n");
  fs::path file = tmp / "state/state.db";
  fs::create_symlink(target, file);
  EXPECT_FALSE(append_event(file, 1000, "/wt", cleared()));
  EXPECT_EQ(test::read_file(target), "keep me\n");
}

}  // namespace
}  // namespace ctxkit::workflow
