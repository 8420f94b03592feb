#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "unit/temp_dir.hpp"
#include "util/mapped_chunks.hpp"

namespace {

using ctxkit::util::MappedChunks;

constexpr size_t kPage = 4096;

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return s;
}

class MappedChunksTest : public ::testing::Test {
 protected:
  ctxkit::test::TempDir dir;
  std::filesystem::path write(const std::string& text) { return dir.write("t.jsonl", text); }
};

// Every chunk read whole, with the bytes said readable after it touched.
struct Read {
  std::string bytes;
  std::optional<std::string> error;
};
Read read_all(MappedChunks& chunks) {
  Read out;
  while (true) {
    auto c = chunks.next();
    if (!c) {
      out.error = c.error().message;
      break;
    }
    if (c->bytes.empty()) break;
    EXPECT_GE(c->readable, c->bytes.size());
    volatile char last = c->bytes.data()[c->readable - 1];
    (void)last;
    out.bytes.append(c->bytes);
  }
  return out;
}

TEST_F(MappedChunksTest, GivesTheFileUpToTheLimitForAnyWindow) {
  for (size_t size : {size_t{0}, size_t{1}, kPage - 1, kPage, 3 * kPage, 5 * kPage + 123}) {
    const std::string text = pattern(size);
    const auto path = write(text);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (size_t window : {size_t{1}, kPage, 2 * kPage, size_t{1} << 20}) {
      for (uint64_t limit : {uint64_t{size}, uint64_t{size / 2}}) {
        SCOPED_TRACE(testing::Message() << size << " " << window << " " << limit);
        MappedChunks chunks(fd, limit, "t", window);
        Read r = read_all(chunks);
        EXPECT_FALSE(r.error.has_value());
        EXPECT_EQ(r.bytes, text.substr(0, limit));
        auto again = chunks.next();  // the end stays the end
        ASSERT_TRUE(again.has_value());
        EXPECT_TRUE(again->bytes.empty());
      }
    }
    ::close(fd);
  }
}

TEST_F(MappedChunksTest, AFileThatGrowsIsReadUpToTheLimit) {
  const std::string text = pattern(4 * kPage);
  const auto path = write(text);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  MappedChunks chunks(fd, text.size(), "t", kPage);
  std::ofstream(path, std::ios::binary | std::ios::app) << pattern(3 * kPage);
  Read r = read_all(chunks);
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.bytes, text);
  ::close(fd);
}

// A file cut short under its mappings (by another process, say): the pages past its new end
// would kill the process with SIGBUS when read; the reader reads on and reports the shrinking.
TEST_F(MappedChunksTest, AFileCutShortWhileReadIsAnErrorNotACrash) {
  const std::string text = pattern(16 * kPage);
  const auto path = write(text);
  for (uint64_t cut : {uint64_t{0}, uint64_t{2 * kPage}, uint64_t{7 * kPage + 100}}) {
    SCOPED_TRACE(cut);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    MappedChunks chunks(fd, text.size(), "t.jsonl", kPage);
    auto first = chunks.next();
    ASSERT_TRUE(first.has_value());
    ASSERT_EQ(first->bytes.size(), kPage);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
    Read r = read_all(chunks);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(*r.error, "reading t.jsonl: the file shrank while it was read");
    ::close(fd);
  }
}

TEST_F(MappedChunksTest, AFileCutInsideItsLastPageIsAnError) {
  const std::string text = pattern(kPage + 1000);
  const auto path = write(text);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  MappedChunks chunks(fd, text.size(), "t", 1 << 20);
  auto first = chunks.next();
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->bytes.size(), text.size());
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kPage + 10)), 0);
  auto end = chunks.next();
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("shrank"), std::string::npos);
  ::close(fd);
}

// The handler takes only faults in the reader's own mappings: another mapping of a file cut
// short still ends the process as it would without it.
TEST_F(MappedChunksTest, ASigbusElsewhereIsNotSwallowed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string text = pattern(4 * kPage);
  const auto path = write(text);
  EXPECT_EXIT(
      {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        MappedChunks chunks(fd, text.size(), "t", kPage);  // installs the handler
        (void)chunks.next();
        void* other = ::mmap(nullptr, 4 * kPage, PROT_READ, MAP_PRIVATE, fd, 0);
        if (other == MAP_FAILED) ::_exit(3);
        if (::truncate(path.c_str(), 0) != 0) ::_exit(4);
        volatile char c = static_cast<const char*>(other)[2 * kPage];
        (void)c;
        ::_exit(0);
      },
      // The disposition before ours takes it: the default kills with SIGBUS; a sanitizer's
      // handler reports it and exits with its own status (not 0, nor the set-up's 3 and 4).
      [](int status) {
        if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGBUS;
        return WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3 &&
               WEXITSTATUS(status) != 4;
      },
      "");
}

}  // namespace
