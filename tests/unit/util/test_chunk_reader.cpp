#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "unit/temp_dir.hpp"
#include "util/chunk_reader.hpp"

namespace {

using ctxkit::util::ChunkReader;

// Bytes that differ from chunk to chunk, so that a chunk handed out twice or out of order shows.
std::string chunk_reader_input(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4093) % 26);
  return s;
}

// Everything the reader hands out, in order, until the end; each chunk checked against `cap`.
std::string read_all(ChunkReader& reader, size_t cap, int* chunks = nullptr) {
  std::string out;
  while (true) {
    auto c = reader.next();
    EXPECT_TRUE(c.has_value());
    if (!c || c->empty()) break;
    EXPECT_LE(c->size(), cap);
    out.append(*c);
    if (chunks) ++*chunks;
  }
  return out;
}

// The read end of a pipe that holds `text` (at most the pipe's buffer) and whose writer has
// closed it; -1 (the test failed) when it could not be made.
int pipe_holding(const std::string& text) {
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe";
    return -1;
  }
  const bool written =
      ::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fds[1]);
  if (!written) {
    ADD_FAILURE() << "writing " << text.size() << " bytes into the pipe";
    ::close(fds[0]);
    return -1;
  }
  return fds[0];
}

// An open descriptor of the file payload.json in `dir` holding `text`, -1 when it could not
// be opened.
int file_holding(const ctxkit::test::TempDir& dir, const std::string& text) {
  const auto path = dir.path() / "payload.json";
  std::ofstream(path, std::ios::binary) << text;
  return ::open(path.c_str(), O_RDONLY);
}

TEST(ChunkReader, InputWithinTheFirstChunkComesInOneChunk) {
  const std::string text = R"({"session_id":"s","transcript_path":"/t"})";
  const int fd = pipe_holding(text);
  ASSERT_GE(fd, 0);
  ChunkReader reader(fd, 4096);
  int chunks = 0;
  EXPECT_EQ(read_all(reader, 4096, &chunks), text);
  EXPECT_EQ(chunks, 1);
  // The end stays the end.
  auto again = reader.next();
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->empty());
  ::close(fd);
}

TEST(ChunkReader, ALongPipedInputComesWholeAndInOrder) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = chunk_reader_input(1'000'003);
  // The writer trickles the input in pieces that do not line up with the chunks.
  std::thread writer([&] {
    size_t at = 0;
    while (at < text.size()) {
      size_t n = std::min<size_t>(7919, text.size() - at);
      ssize_t w = ::write(fds[1], text.data() + at, n);
      if (w <= 0) break;
      at += static_cast<size_t>(w);
    }
    ::close(fds[1]);
  });
  int chunks = 0;
  std::string got;
  {
    ChunkReader reader(fds[0], 65536);
    got = read_all(reader, 65536, &chunks);
  }
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(got.size(), text.size());
  EXPECT_TRUE(got == text);
  EXPECT_GE(chunks, static_cast<int>(text.size() / 65536));
}

TEST(ChunkReader, ALongFileComesWhole) {
  ctxkit::test::TempDir dir;
  const std::string text = chunk_reader_input(300'001);
  const int fd = file_holding(dir, text);
  ASSERT_GE(fd, 0);
  {
    int chunks = 0;
    ChunkReader reader(fd, 4096);
    EXPECT_TRUE(read_all(reader, 4096, &chunks) == text);
    EXPECT_EQ(chunks, static_cast<int>((text.size() + 4095) / 4096));
  }
  ::close(fd);
}

TEST(ChunkReader, AnInputOfExactlyOneChunkEndsAfterIt) {
  const std::string text = chunk_reader_input(4096);
  const int fd = pipe_holding(text);
  ASSERT_GE(fd, 0);
  ChunkReader reader(fd, 4096);
  EXPECT_TRUE(read_all(reader, 4096) == text);
  ::close(fd);
}

TEST(ChunkReader, BytesThatArrivedAreHandedOutWhileTheWriterKeepsThePipeOpen) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::atomic<bool> taken{false}, closed{false};
  std::thread writer([&] {
    ASSERT_EQ(::write(fds[1], "{\"a\":\x01", 6), 6);
    // Holds the pipe open until the bytes were taken (or 5 s went by).
    for (int i = 0; i < 500 && !taken; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    closed = true;
    ::close(fds[1]);
  });
  {
    ChunkReader reader(fds[0], 4096);
    auto c = reader.next();
    const bool writer_had_closed = closed;
    taken = true;
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->size(), 6u);
    EXPECT_FALSE(writer_had_closed);
  }
  writer.join();
  ::close(fds[0]);
}

TEST(ChunkReader, AReadErrorIsReturnedOnceThenTheInputHasEnded) {
  ChunkReader reader(-1, 4096);  // EBADF
  auto first = reader.next();
  ASSERT_FALSE(first.has_value());
  EXPECT_NE(first.error().message.find("reading stdin"), std::string::npos);
  auto second = reader.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->empty());
}

}  // namespace
