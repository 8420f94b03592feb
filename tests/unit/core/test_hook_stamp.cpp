#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/hook_stamp.hpp"
#include "unit/temp_dir.hpp"
#include "util/time.hpp"

namespace ctxkit::core {
namespace {
namespace fs = std::filesystem;

TEST(HookStamp, NeverUntilRecordedThenNowInAPrivateFolder) {
  test::TempDir tmp;
  Locations loc = Locations::resolve(tmp.env());
  EXPECT_FALSE(hook_last_run_ms(loc, "ctx-remind"));
  const int64_t before = util::now_ms();
  record_hook_run(loc, "ctx-remind");
  auto last = hook_last_run_ms(loc, "ctx-remind");
  ASSERT_TRUE(last);
  EXPECT_GE(*last, before - 1000);
  EXPECT_LE(*last, util::now_ms() + 1000);
  EXPECT_FALSE(hook_last_run_ms(loc, "ctx-status"));
  struct stat st {};
  ASSERT_EQ(::stat(hooks_dir(loc).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((hooks_dir(loc) / "ctx-remind.last").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 0);
}

TEST(HookStamp, ALaterRunMovesTheTimeForward) {
  test::TempDir tmp;
  Locations loc = Locations::resolve(tmp.env());
  record_hook_run(loc, "ctx-status");
  fs::path stamp = hooks_dir(loc) / "ctx-status.last";
  fs::last_write_time(stamp, fs::last_write_time(stamp) - std::chrono::hours(48));
  auto old = hook_last_run_ms(loc, "ctx-status");
  record_hook_run(loc, "ctx-status");
  auto now = hook_last_run_ms(loc, "ctx-status");
  ASSERT_TRUE(old && now);
  EXPECT_GT(*now - *old, 47 * 3600 * 1000LL);
}

TEST(HookStamp, ALinkInItsPlaceIsNotFollowed) {
  test::TempDir tmp;
  Locations loc = Locations::resolve(tmp.env());
  fs::create_directories(hooks_dir(loc));
  fs::path target = tmp.write("target", "keep");
  fs::last_write_time(target, fs::last_write_time(target) - std::chrono::hours(48));
  auto before = fs::last_write_time(target);
  fs::create_symlink(target, hooks_dir(loc) / "ctx-remind.last");
  record_hook_run(loc, "ctx-remind");  // refused, silently
  EXPECT_EQ(fs::last_write_time(target), before);
  EXPECT_FALSE(hook_last_run_ms(loc, "ctx-remind"));
  EXPECT_EQ(test::read_file(target), "keep");
}

// ctxkit's state folder itself is its own: a link in its place is not followed either, while a
// home reached through a link is the user's.
TEST(HookStamp, AStateFolderThatIsALinkIsNotFollowedAHomeThroughALinkIs) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/home");
  fs::create_directory_symlink(tmp / "data/home", tmp / "home");
  Locations loc = Locations::resolve(tmp.env());
  record_hook_run(loc, "ctx-remind");
  EXPECT_TRUE(hook_last_run_ms(loc, "ctx-remind"));
  EXPECT_TRUE(fs::is_regular_file(tmp / "data/home/.local/state/ctxkit/hooks/ctx-remind.last"));

  fs::remove_all(tmp / "data/home/.local/state/ctxkit");
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", loc.state_dir);
  record_hook_run(loc, "ctx-remind");  // refused, silently
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
  EXPECT_FALSE(hook_last_run_ms(loc, "ctx-remind"));
}

}  // namespace
}  // namespace ctxkit::core
