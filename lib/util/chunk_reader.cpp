#include "util/chunk_reader.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

namespace ctxkit::util {

namespace {
constexpr size_t kSlots = 3;

struct Fill {
  size_t bytes = 0;
  bool end = false;  // end of input (or an error) reached
  std::optional<Error> error;
};

// Reads until `cap` bytes are in `buf` or the input ends.
Fill fill(int fd, char* buf, size_t cap) {
  Fill f;
  while (f.bytes < cap) {
    ssize_t n = ::read(fd, buf + f.bytes, cap - f.bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      f.error = Error{fmt::format("reading stdin: {}", std::strerror(errno))};
      f.end = true;
      break;
    }
    if (n == 0) {
      f.end = true;
      break;
    }
    f.bytes += static_cast<size_t>(n);
  }
  return f;
}
}  // namespace

struct ChunkReader::Shared {
  int fd = -1;
  size_t chunk = 0;
  std::array<std::unique_ptr<char[]>, kSlots> slot;
  std::array<size_t, kSlots> length{};
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t produced = 0;  // chunks filled
  uint64_t taken = 0;     // chunks handed out
  uint64_t released = 0;  // chunks the caller is done with
  bool ended = false;     // no chunk follows the produced ones
  bool stop = false;      // the caller is gone
  bool ahead = false;     // the reading thread runs
  std::optional<Error> error;

  char* buffer(uint64_t k) {
    auto& s = slot[k % kSlots];
    if (!s) s = std::make_unique_for_overwrite<char[]>(chunk);
    return s.get();
  }

  // The reading thread: fills chunk after chunk while fewer than kSlots are in use.
  static void read_ahead(const std::shared_ptr<Shared>& self) {
    while (true) {
      uint64_t k = 0;
      char* buf = nullptr;
      {
        std::unique_lock lock(self->mutex);
        self->changed.wait(lock,
                           [&] { return self->stop || self->produced < self->released + kSlots; });
        if (self->stop) return;
        k = self->produced;
        buf = self->buffer(k);
      }
      Fill f = fill(self->fd, buf, self->chunk);
      std::lock_guard lock(self->mutex);
      if (f.bytes > 0) {
        self->length[k % kSlots] = f.bytes;
        ++self->produced;
      }
      if (f.end) {
        self->ended = true;
        self->error = std::move(f.error);
      }
      self->changed.notify_all();
      if (f.end) return;
    }
  }
};

ChunkReader::ChunkReader(int fd, size_t chunk) : shared_(std::make_shared<Shared>()) {
  shared_->fd = fd;
  shared_->chunk = std::max<size_t>(chunk, 1);
}

ChunkReader::~ChunkReader() {
  std::lock_guard lock(shared_->mutex);
  shared_->stop = true;
  shared_->changed.notify_all();
}

bool ChunkReader::read_ahead() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->ahead;
}

Result<std::string_view> ChunkReader::next() {
  Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  if (s.taken > 0) s.released = s.taken;  // the previous chunk is done with
  if (!s.ahead) {
    // Until a chunk has been filled whole, this thread reads: most inputs end in the first one.
    if (s.ended) {
      if (s.error) {
        Error e = std::move(*s.error);
        s.error.reset();
        return std::unexpected(std::move(e));
      }
      return std::string_view();
    }
    const uint64_t k = s.produced;
    char* buf = s.buffer(k);
    lock.unlock();
    Fill f = fill(s.fd, buf, s.chunk);
    lock.lock();
    s.length[k % kSlots] = f.bytes;
    ++s.produced;
    ++s.taken;
    if (f.end) {
      s.ended = true;
      if (f.error) {
        if (f.bytes == 0) return std::unexpected(std::move(*f.error));
        s.error = std::move(f.error);
      }
    } else {
      // The input goes on: read the next chunks ahead on a thread of their own.
      try {
        std::thread(Shared::read_ahead, shared_).detach();
        s.ahead = true;
      } catch (const std::system_error&) {
        // No thread: this one goes on reading, chunk by chunk.
      }
    }
    return std::string_view(buf, f.bytes);
  }
  s.changed.notify_all();
  s.changed.wait(lock, [&] { return s.produced > s.taken || s.ended; });
  if (s.produced > s.taken) {
    const uint64_t k = s.taken++;
    return std::string_view(s.slot[k % kSlots].get(), s.length[k % kSlots]);
  }
  if (s.error) {
    Error e = std::move(*s.error);
    s.error.reset();
    return std::unexpected(std::move(e));
  }
  return std::string_view();
}

}  // namespace ctxkit::util
