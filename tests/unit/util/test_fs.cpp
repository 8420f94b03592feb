#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <utility>

#include "unit/temp_dir.hpp"
#include "util/fs.hpp"

namespace ctxkit {
namespace {
namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Sets the umask for one test and restores it.
struct Umask {
  mode_t old;
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
};

TEST(MakePrivateDirs, CreatesEveryMissingFolder0700EvenUnderUmask000) {
  test::TempDir tmp;
  Umask u(0);
  auto r = util::make_private_dirs(tmp / "a/b/c", tmp / "a");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(mode_of(tmp / "a"), 0700u);
  EXPECT_EQ(mode_of(tmp / "a/b"), 0700u);
  EXPECT_EQ(mode_of(tmp / "a/b/c"), 0700u);
}

TEST(MakePrivateDirs, ATrailingSlashChecksTheSameFolders) {
  test::TempDir tmp;
  fs::create_directories(tmp / "state");
  ::chmod((tmp / "state").c_str(), 0777);
  ASSERT_TRUE(util::make_private_dirs((tmp / "state").string() + "/"));
  EXPECT_EQ(mode_of(tmp / "state"), 0700u);
}

TEST(MakePrivateDirs, TightensOwnFoldersThatAreTooOpen) {
  test::TempDir tmp;
  fs::create_directories(tmp / "state/archive");
  ::chmod((tmp / "state").c_str(), 0777);
  ::chmod((tmp / "state/archive").c_str(), 0775);
  ASSERT_TRUE(util::make_private_dirs(tmp / "state/archive/p", tmp / "state"));
  EXPECT_EQ(mode_of(tmp / "state"), 0700u);
  EXPECT_EQ(mode_of(tmp / "state/archive"), 0700u);
  EXPECT_EQ(mode_of(tmp / "state/archive/p"), 0700u);
}

TEST(MakePrivateDirs, LeavesFoldersAboveTheBaseAsTheyAre) {
  test::TempDir tmp;
  fs::create_directories(tmp / "home");
  ::chmod((tmp / "home").c_str(), 0755);
  ASSERT_TRUE(util::make_private_dirs(tmp / "home/state", tmp / "home/state"));
  EXPECT_EQ(mode_of(tmp / "home"), 0755u);
  EXPECT_EQ(mode_of(tmp / "home/state"), 0700u);
}

TEST(MakePrivateDirs, RefusesALinkBelowTheBase) {
  test::TempDir tmp;
  fs::create_directories(tmp / "state");
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "state/archive");
  auto r = util::make_private_dirs(tmp / "state/archive/p", tmp / "state");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, (tmp / "state/archive").string() +
                                   " is a symbolic link inside the state directory (refused)");
  EXPECT_FALSE(fs::exists(tmp / "elsewhere/p"));
}

// The base is ctxkit's own folder: a link in its place is refused like one below it (nothing is
// made through it), while links above it are the user's (a home reached through a link).
TEST(MakePrivateDirs, RefusesALinkAsTheBaseAndFollowsLinksAboveIt) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/home");
  fs::create_directory_symlink(tmp / "data/home", tmp / "home");
  ASSERT_TRUE(
      util::make_private_dirs(tmp / "home/state/ctxkit/archive", tmp / "home/state/ctxkit"));
  EXPECT_TRUE(fs::is_directory(tmp / "data/home/state/ctxkit/archive"));
  EXPECT_EQ(mode_of(tmp / "data/home/state/ctxkit"), 0700u);

  fs::create_directories(tmp / "elsewhere");
  const unsigned elsewhere_mode = mode_of(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "home/state/other");
  for (const auto& [dir, base] :
       {std::pair{tmp / "home/state/other", fs::path()},
        std::pair{tmp / "home/state/other/archive", tmp / "home/state/other"}}) {
    auto r = util::make_private_dirs(dir, base);
    ASSERT_FALSE(r) << dir;
    EXPECT_EQ(r.error().message, (tmp / "home/state/other").string() +
                                     " is a symbolic link inside the state directory (refused)");
  }
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
  EXPECT_EQ(mode_of(tmp / "elsewhere"), elsewhere_mode);
}

TEST(ResolveAbove, ResolvesTheLinksAboveTheBaseAndKeepsTheRest) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/home/state/ctxkit");
  fs::create_directory_symlink(tmp / "data/home", tmp / "home");
  const fs::path real = fs::canonical(tmp / "data/home");
  EXPECT_EQ(util::resolve_above(tmp / "home/state/ctxkit/state.db", tmp / "home/state/ctxkit"),
            real / "state/ctxkit/state.db");
  EXPECT_EQ(util::resolve_above(tmp / "home/state/ctxkit/", tmp / "home/state/ctxkit"),
            real / "state/ctxkit");
  // ctxkit's own folder is kept as it is, a link there included: the open refuses it.
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "home/state/linked");
  EXPECT_EQ(util::resolve_above(tmp / "home/state/linked/state.db", tmp / "home/state/linked"),
            real / "state/linked/state.db");
  // Not below the base, or nothing above it to resolve: as it is.
  EXPECT_EQ(util::resolve_above(tmp / "home/x.db", tmp / "home/state/ctxkit"), tmp / "home/x.db");
  EXPECT_EQ(util::resolve_above(tmp / "missing/a/b.db", tmp / "missing/a"), tmp / "missing/a/b.db");
}

TEST(MakePrivateDirs, RefusesAFileInPlaceOfAFolder) {
  test::TempDir tmp;
  tmp.write("state", "x");
  auto r = util::make_private_dirs(tmp / "state");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, (tmp / "state").string() + " is not a directory");
}

TEST(MakePrivateDirs, RefusesASharedStickyFolderInsteadOfTighteningIt) {
  test::TempDir tmp;
  fs::create_directories(tmp / "shared");
  ::chmod((tmp / "shared").c_str(), 01777);
  auto r = util::make_private_dirs(tmp / "shared");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            (tmp / "shared").string() +
                " is a shared folder (sticky bit); refusing to keep private data there");
  EXPECT_EQ(mode_of(tmp / "shared"), 01777u);
}

TEST(MakePrivateDirs, RefusesAFolderOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  test::TempDir tmp;
  fs::create_directories(tmp / "state");
  ASSERT_EQ(::chown((tmp / "state").c_str(), 65534, 65534), 0);
  auto r = util::make_private_dirs(tmp / "state");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            (tmp / "state").string() +
                " belongs to another user (uid 65534); refusing to keep private data there");
}

TEST(ReadFile, ReadsAWholeFileWithNulBytes) {
  test::TempDir tmp;
  std::string data("a\0b\nc", 5);
  auto p = tmp.write("f", data);
  auto r = util::read_file(p);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, data);
}

TEST(ReadFile, MissingIsNotFound) {
  test::TempDir tmp;
  auto r = util::read_file(tmp / "none");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::NotFound);
  EXPECT_EQ(r.error().message,
            "opening " + (tmp / "none").string() + ": No such file or directory");
}

TEST(ReadFile, DirectoryIsNotARegularFile) {
  test::TempDir tmp;
  auto r = util::read_file(tmp.path());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "reading " + tmp.path().string() + ": not a regular file");
}

TEST(ReadFile, FifoIsRefusedWithoutBlocking) {
  test::TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = util::read_file(tmp / "fifo");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "reading " + (tmp / "fifo").string() + ": not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ReadFile, LargerThanTheCapIsAnError) {
  test::TempDir tmp;
  auto p = tmp.write("f", std::string(100, 'x'));
  auto r = util::read_file(p, {99});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "reading " + p.string() + ": larger than 99 bytes");
  EXPECT_TRUE(util::read_file(p, {100}));
}

TEST(ReadFile, APathWithANulByteIsRefusedNotTruncated) {
  test::TempDir tmp;
  tmp.write("t", "the wrong file");
  std::string p = (tmp / "t").string() + std::string("\0x.jsonl", 8);
  auto r = util::read_file(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::Invalid);
  EXPECT_FALSE(util::open_private_file(p, O_WRONLY));
  EXPECT_FALSE(util::make_private_dirs(p));
}

TEST(ReadFile, LinkRefusedWhenAsked) {
  test::TempDir tmp;
  auto p = tmp.write("f", "x");
  fs::create_symlink(p, tmp / "link");
  EXPECT_TRUE(util::read_file(tmp / "link"));
  auto r = util::read_file(tmp / "link", {1024, false});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "reading " + (tmp / "link").string() + ": a symbolic link (refused)");
}

TEST(OpenPrivateFile, CreatesA0600FileUnderUmask000) {
  test::TempDir tmp;
  Umask u(0);
  auto fd = util::open_private_file(tmp / "log", O_WRONLY | O_APPEND);
  ASSERT_TRUE(fd) << fd.error().message;
  ::close(*fd);
  EXPECT_EQ(mode_of(tmp / "log"), 0600u);
}

TEST(OpenPrivateFile, RefusesALinkAndLeavesItsTargetAlone) {
  test::TempDir tmp;
  auto target = tmp.write("secret", "original\n");
  fs::create_symlink(target, tmp / "archive.log");
  auto r = util::append_private_line(tmp / "archive.log", "appended");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "opening " + (tmp / "archive.log").string() + ": a symbolic link (refused)");
  EXPECT_EQ(test::read_file(target), "original\n");
}

TEST(OpenPrivateFile, RefusesAFifoWithoutBlocking) {
  test::TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  auto r = util::open_private_file(tmp / "fifo", O_WRONLY | O_APPEND);
  ASSERT_FALSE(r);
}

TEST(OpenPrivateFile, TightensAnOpenFileOfOurs) {
  test::TempDir tmp;
  auto p = tmp.write("log", "a\n");
  ::chmod(p.c_str(), 0666);
  ASSERT_TRUE(util::append_private_line(p, "b"));
  EXPECT_EQ(mode_of(p), 0600u);
  EXPECT_EQ(test::read_file(p), "a\nb\n");
}

TEST(ReadAllAt, ReadsTheBytesAtAnOffsetAndSaysWhenTheFileEndsFirst) {
  test::TempDir tmp;
  const auto path = tmp.write("f", "0123456789");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string out(4, '\0');
  EXPECT_EQ(util::read_all_at(fd, out.data(), 4, 3), 0);
  EXPECT_EQ(out, "3456");
  EXPECT_EQ(util::read_all_at(fd, out.data(), 4, 8), ENODATA);  // two bytes left
  ::close(fd);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_EQ(util::read_all_at(pipe_fds[0], out.data(), 4, 0), ESPIPE);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(WriteAll, WritesEverythingToANonBlockingPipeThatFillsUp) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK), 0);
  const std::string data(1 << 20, 'x');  // far more than a pipe holds: the writer meets EAGAIN
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  EXPECT_EQ(util::write_all(fds[1], data), 0);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got.size(), data.size());
  EXPECT_EQ(got, data);
}

TEST(WriteAll, ReturnsTheErrnoOfAFailedWrite) {
  EXPECT_EQ(util::write_all(-1, "x"), EBADF);
  EXPECT_EQ(util::write_all(-1, ""), 0);  // nothing to write: no write at all
}

}  // namespace
}  // namespace ctxkit
