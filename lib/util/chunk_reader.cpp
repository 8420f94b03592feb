#include "util/chunk_reader.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
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

// One read of up to `cap` bytes into `buf` (again after EINTR): by position when `range` is given
// (`pos` moves on), else from the descriptor's own offset.
Fill fill(int fd, char* buf, size_t cap, const std::optional<ChunkReader::Range>& range,
          uint64_t& pos) {
  Fill f;
  while (f.bytes < cap) {
    ssize_t n = 0;
    if (range) {
      if (pos >= range->end) {
        f.end = true;
        break;
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(cap - f.bytes, range->end - pos));
      n = ::pread(fd, buf + f.bytes, want, static_cast<off_t>(pos));
    } else {
      n = ::read(fd, buf + f.bytes, cap - f.bytes);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      f.error = Error{fmt::format("reading {}: {}", range ? range->name : std::string("stdin"),
                                  std::strerror(errno))};
      f.end = true;
      break;
    }
    if (n == 0) {  // the end (a file that shrank ends where it now ends)
      f.end = true;
      break;
    }
    f.bytes += static_cast<size_t>(n);
    pos += static_cast<uint64_t>(n);
    // What one read gave is handed out at once: a pipe whose writer pauses (or holds it open
    // after ill-formed input) must not keep bytes that arrived from the scanner.
    break;
  }
  std::memset(buf + f.bytes, 0, ChunkReader::kPadding);
  return f;
}
}  // namespace

struct ChunkReader::Shared {
  int fd = -1;
  bool owns_fd = false;  // a duplicate of the caller's (with a range), closed by the last owner
  ~Shared() {
    if (owns_fd && fd >= 0) ::close(fd);
  }
  size_t chunk = 0;
  std::array<std::unique_ptr<char[]>, kSlots> slot;
  std::array<size_t, kSlots> length{};
  std::optional<ChunkReader::Range> range;
  uint64_t pos = 0;  // the next byte to read, with a range
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t base = 0;        // the chunk in slot 0 when the reading thread started (see slot_of)
  uint64_t read_alone = 0;  // bytes read before the reading thread started
  uint64_t read_alone_limit = 0;
  uint64_t produced = 0;  // chunks filled
  uint64_t taken = 0;     // chunks handed out
  uint64_t released = 0;  // chunks the caller is done with
  bool ended = false;     // no chunk follows the produced ones
  bool stop = false;      // the caller is gone
  bool ahead = false;     // the reading thread runs
  std::optional<Error> error;

  // Before the reading thread starts, every chunk goes to slot 0 (the caller is done with the
  // previous one when it asks for the next), which stays in the cache; after, chunk k goes to
  // slot (k - base) % kSlots, base being the chunk the caller held then, in slot 0.
  size_t slot_of(uint64_t k) const { return ahead ? static_cast<size_t>((k - base) % kSlots) : 0; }

  char* buffer(uint64_t k) {
    auto& s = slot[slot_of(k)];
    if (!s) s = std::make_unique_for_overwrite<char[]>(chunk + kPadding);
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
      Fill f = fill(self->fd, buf, self->chunk, self->range, self->pos);
      std::lock_guard lock(self->mutex);
      if (f.bytes > 0) {
        self->length[self->slot_of(k)] = f.bytes;
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

ChunkReader::ChunkReader(int fd, size_t chunk, uint64_t read_alone, std::optional<Range> range)
    : shared_(std::make_shared<Shared>()) {
  // With a range the reading thread preads its own duplicate of `fd`, so that the caller may
  // close `fd` while the thread still reads.
  shared_->fd = range ? ::fcntl(fd, F_DUPFD_CLOEXEC, 0) : fd;
  shared_->owns_fd = range.has_value() && shared_->fd >= 0;
  if (range && shared_->fd < 0) shared_->fd = fd;  // no descriptor left: read the caller's
  shared_->range = range;
  if (range) shared_->pos = range->offset;
  shared_->chunk = std::max<size_t>(chunk, 1);
  shared_->read_alone_limit = read_alone;
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
    Fill f = fill(s.fd, buf, s.chunk, s.range, s.pos);
    lock.lock();
    s.length[s.slot_of(k)] = f.bytes;
    s.read_alone += f.bytes;
    ++s.produced;
    ++s.taken;
    if (f.end) {
      s.ended = true;
      if (f.error) {
        if (f.bytes == 0) return std::unexpected(std::move(*f.error));
        s.error = std::move(f.error);
      }
    } else if (s.read_alone >= s.read_alone_limit) {
      // The input goes on past a few megabytes: read the next chunks ahead on a thread of their
      // own (below that, starting a thread costs more than it saves).
      try {
        s.base = k;
        s.ahead = true;
        std::thread(Shared::read_ahead, shared_).detach();
      } catch (const std::system_error&) {
        s.ahead = false;  // no thread: this one goes on reading, chunk by chunk
      }
    }
    return std::string_view(buf, f.bytes);
  }
  s.changed.notify_all();
  s.changed.wait(lock, [&] { return s.produced > s.taken || s.ended; });
  if (s.produced > s.taken) {
    const uint64_t k = s.taken++;
    return std::string_view(s.slot[s.slot_of(k)].get(), s.length[s.slot_of(k)]);
  }
  if (s.error) {
    Error e = std::move(*s.error);
    s.error.reset();
    return std::unexpected(std::move(e));
  }
  return std::string_view();
}

}  // namespace ctxkit::util
