// The owned descriptor closes once, moves with its owner; CTXKIT_TRY hands a failure back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/line_reader.hpp"
#include "util/unique_fd.hpp"

namespace ctxkit::util {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesOnceAndMovesWithItsOwner) {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    UniqueFd a(raw);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from owner holds none
    EXPECT_EQ(b.get(), raw);
    UniqueFd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
  int other = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  UniqueFd d(other);
  const int kept = d.release();
  EXPECT_FALSE(d);
  EXPECT_TRUE(is_open(kept));
  d.reset(kept);
  d.reset(kept);  // the same descriptor again: kept open
  EXPECT_TRUE(is_open(kept));
  d.reset();
  EXPECT_FALSE(is_open(kept));
}

// A reader and a lock moved to another owner keep working, and close their descriptor once.
TEST(UniqueFd, AMovedLineReaderReadsOnAndAMovedLockIsHeldUntilItsLastOwnerGoes) {
  test::TempDir tmp;
  const auto file = tmp.write("lines.txt", "one\ntwo\nthree\n");
  auto opened = LineReader::open(file);
  ASSERT_TRUE(opened);
  auto first = opened->next();
  ASSERT_TRUE(first && first->has_value());
  LineReader moved(std::move(*opened));
  std::vector<std::string> rest;
  while (true) {
    auto line = moved.next();
    ASSERT_TRUE(line);
    if (!line->has_value()) break;
    rest.emplace_back((*line)->text);
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"two", "three"}));

  const auto path = tmp / "lock";
  auto held = FileLock::acquire(path, false);
  ASSERT_TRUE(held && held->has_value());
  std::optional<FileLock> owner(std::move(**held));
  held->reset();
  EXPECT_TRUE(FileLock::held(path));
  owner.reset();
  EXPECT_FALSE(FileLock::held(path));
}

Result<int> half(int n) {
  if (n % 2 != 0) return fail("odd", Error::Kind::Invalid);
  return n / 2;
}

Result<int> quarter(int n) {
  CTXKIT_TRY(half(n));
  CTXKIT_TRY(half(n / 2));
  return n / 4;
}

TEST(Try, HandsTheFirstFailureBackWithItsKindAndGoesOnOtherwise) {
  EXPECT_EQ(*quarter(8), 2);
  auto odd = quarter(6);  // 6 halves, 3 does not
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().message, "odd");
  EXPECT_EQ(odd.error().kind, Error::Kind::Invalid);
}

}  // namespace
}  // namespace ctxkit::util
