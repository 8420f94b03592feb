#include <gtest/gtest.h>

#include <filesystem>

#include "unit/temp_dir.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::util {
namespace {
namespace fs = std::filesystem;

TEST(FileLock, OneHolderAtATimeAndHeldSaysSo) {
  test::TempDir dir;
  const fs::path p = dir / "run.lock";
  EXPECT_FALSE(FileLock::held(p));  // no file
  auto first = FileLock::acquire(p, false);
  ASSERT_TRUE(first && *first) << (first ? "" : first.error().message);
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(FileLock::held(p));
  auto second = FileLock::acquire(p, false);
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second);  // another holder (flock is per open file, so this process counts too)
  FileLock moved = std::move(**first);
  EXPECT_TRUE(FileLock::held(p));
  { FileLock gone = std::move(moved); }
  EXPECT_FALSE(FileLock::held(p));
  auto third = FileLock::acquire(p, false);
  EXPECT_TRUE(third && *third);
}

TEST(FileLock, ALinkOrAMissingFolderIsAnError) {
  test::TempDir dir;
  dir.write("target", "");
  fs::create_symlink(dir / "target", dir / "link.lock");
  auto linked = FileLock::acquire(dir / "link.lock", false);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("opening "), std::string::npos);
  EXPECT_FALSE(FileLock::held(dir / "link.lock"));
  auto missing = FileLock::acquire(dir / "no-such-folder" / "x.lock", false);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);
}

}  // namespace
}  // namespace ctxkit::util
