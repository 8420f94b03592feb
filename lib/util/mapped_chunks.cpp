#include "util/mapped_chunks.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels refuse it and pages fault in instead
#endif

namespace ctxkit::util {

namespace {

// Windows loaded ahead of the one the caller holds.
constexpr size_t kWindowsAhead = 2;

// The mappings in use, for the SIGBUS handler: a fault inside one of them (its file shrank) gets
// zero pages from the faulting page to the mapping's end, and the mapping is marked.
struct GuardSlot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> hit{false};
};
constexpr size_t kGuardSlots = 16;
GuardSlot g_slots[kGuardSlots];
struct sigaction g_previous {};
uintptr_t g_page = 4096;
bool g_installed = false;
std::once_flag g_install_once;

void on_sigbus(int, siginfo_t* info, void*) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (auto& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    const uintptr_t end = s.end.load(std::memory_order_acquire);
    // 0: a free slot; 1: one being claimed, whose end may already be set (not yet a range).
    if (begin <= 1 || addr < begin || addr >= end) continue;
    const uintptr_t page = addr & ~(g_page - 1);
    void* zero = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zero == MAP_FAILED) break;
    s.hit.store(true, std::memory_order_release);
    return;  // the access is made again, and reads zeros
  }
  // Not one of ours (or no zero page): the previous disposition takes the fault when it recurs.
  ::sigaction(SIGBUS, &g_previous, nullptr);
}

void install_handler() {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<uintptr_t>(page);
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  g_installed = ::sigaction(SIGBUS, &sa, &g_previous) == 0;
}

// A free slot for [begin, end), or -1 (the window is then read instead of mapped).
int guard(uintptr_t begin, uintptr_t end) {
  for (size_t i = 0; i < kGuardSlots; ++i) {
    uintptr_t expected = 0;
    // Claimed with a placeholder first, so that the handler never sees a begin without its end.
    if (!g_slots[i].begin.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    g_slots[i].hit.store(false, std::memory_order_relaxed);
    g_slots[i].end.store(end, std::memory_order_release);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unguard(int slot) {
  g_slots[slot].end.store(0, std::memory_order_release);
  g_slots[slot].begin.store(0, std::memory_order_release);
}

uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

// One window of the file: mapped, or read into a buffer.
struct Window {
  char* data = nullptr;
  size_t bytes = 0;
  size_t readable = 0;
  size_t map_length = 0;  // > 0: data is a mapping of this length
  int slot = -1;
  std::unique_ptr<char[]> buffer;
  std::optional<Error> error;  // reading it failed

  Window() = default;
  Window(Window&& o) noexcept
      : data(o.data),
        bytes(o.bytes),
        readable(o.readable),
        map_length(o.map_length),
        slot(o.slot),
        buffer(std::move(o.buffer)),
        error(std::move(o.error)) {
    o.map_length = 0;
    o.slot = -1;
  }
  Window& operator=(Window&&) = delete;
  Window(const Window&) = delete;
  ~Window() { release(); }

  // Whether the file shrank under the mapping (zero pages were put in).
  bool shrank() const { return slot >= 0 && g_slots[slot].hit.load(std::memory_order_acquire); }

  void release() {
    if (map_length > 0) {
      if (slot >= 0) unguard(slot);
      ::munmap(data, map_length);
    }
    map_length = 0;
    slot = -1;
  }
};

Error shrank_error(const std::string& name) {
  return Error{fmt::format("reading {}: the file shrank while it was read", name)};
}

// Bytes [offset, offset + bytes) of the file, mapped with what follows up to one page more (the
// padding of lines near the end), or read.
Window load(int fd, uint64_t offset, uint64_t limit, size_t window, const std::string& name) {
  Window w;
  w.bytes = static_cast<size_t>(std::min<uint64_t>(window, limit - offset));
  const size_t map_length = static_cast<size_t>(round_up(
      std::min<uint64_t>(static_cast<uint64_t>(w.bytes) + g_page, limit - offset), g_page));
  if (g_installed) {
    void* m = ::mmap(nullptr, map_length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(offset));
    if (m != MAP_FAILED) {
      const auto begin = reinterpret_cast<uintptr_t>(m);
      w.slot = guard(begin, begin + map_length);
      if (w.slot >= 0) {
        w.data = static_cast<char*>(m);
        w.map_length = map_length;
        w.readable = map_length;
        // Pages present now, on this thread, rather than one fault at a time in the caller's.
        ::madvise(m, map_length, MADV_POPULATE_READ);
        return w;
      }
      ::munmap(m, map_length);
    }
  }
  w.buffer = std::make_unique_for_overwrite<char[]>(w.bytes + MappedChunks::kPadding);
  w.data = w.buffer.get();
  w.readable = w.bytes + MappedChunks::kPadding;
  size_t got = 0;
  while (got < w.bytes) {
    ssize_t n = ::pread(fd, w.data + got, w.bytes - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      w.error = Error{fmt::format("reading {}: {}", name, std::strerror(errno))};
      break;
    }
    if (n == 0) {
      w.error = shrank_error(name);
      break;
    }
    got += static_cast<size_t>(n);
  }
  std::memset(w.data + w.bytes, 0, MappedChunks::kPadding);
  return w;
}

}  // namespace

struct MappedChunks::Shared {
  int fd = -1;
  bool owns_fd = false;  // a duplicate of the caller's, closed by the last owner
  uint64_t limit = 0;
  size_t window = 0;
  std::string name;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Window> ready;       // loaded, not handed out yet
  std::optional<Window> current;  // handed out last
  uint64_t next_offset = 0;       // of the next window to load
  size_t skip = 0;                // bytes before `start` in the first window (mapped from a page)
  bool loaded_any = false;        // a window was loaded
  bool loading_ended = false;     // every window is loaded (or one failed)
  bool finished = false;          // the end (or an error) was returned
  bool stop = false;              // the caller is gone
  bool ahead = false;             // the loading thread runs
  ~Shared() {
    if (owns_fd && fd >= 0) ::close(fd);
  }

  // Loads the window at next_offset (called with the lock held; released while loading).
  void load_next(std::unique_lock<std::mutex>& lock) {
    const uint64_t offset = next_offset;
    lock.unlock();
    Window w = load(fd, offset, limit, window, name);
    lock.lock();
    const bool failed = w.error.has_value();
    next_offset = offset + w.bytes;
    loaded_any = true;
    ready.push_back(std::move(w));
    if (failed || next_offset >= limit) loading_ended = true;
    changed.notify_all();
  }

  // The loading thread: keeps kWindowsAhead windows ready.
  static void load_ahead(const std::shared_ptr<Shared>& self) {
    std::unique_lock lock(self->mutex);
    while (true) {
      self->changed.wait(lock, [&] { return self->stop || self->ready.size() < kWindowsAhead; });
      if (self->stop || self->loading_ended) return;
      self->load_next(lock);
    }
  }
};

MappedChunks::MappedChunks(int fd, uint64_t limit, std::string name, size_t window, uint64_t start)
    : shared_(std::make_shared<Shared>()) {
  std::call_once(g_install_once, install_handler);
  Shared& s = *shared_;
  // The loading thread maps its own duplicate of `fd`, so that the caller may close `fd` while
  // the thread still runs; without one, this thread loads every window itself.
  s.fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  s.owns_fd = s.fd >= 0;
  if (s.fd < 0) s.fd = fd;
  s.limit = limit;
  s.window = static_cast<size_t>(round_up(std::max<size_t>(window, 1), g_page));
  s.name = std::move(name);
  // Windows are mapped from page boundaries: the first starts at the page holding `start`.
  start = std::min(start, limit);
  s.next_offset = start / g_page * g_page;
  s.skip = static_cast<size_t>(start - s.next_offset);
  s.loading_ended = start >= limit;
}

MappedChunks::~MappedChunks() {
  std::lock_guard lock(shared_->mutex);
  shared_->stop = true;
  shared_->current.reset();
  shared_->changed.notify_all();
}

Result<MappedChunks::Chunk> MappedChunks::next() {
  Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  if (s.current) {
    // The caller is done with it: had the file shrunk under it, what it read was not the file.
    const bool shrank = s.current->shrank();
    s.current.reset();
    s.changed.notify_all();
    if (shrank && !s.finished) {
      s.finished = true;
      return std::unexpected(shrank_error(s.name));
    }
  }
  if (s.finished) return Chunk{};
  if (!s.ahead && !s.loading_ended && s.owns_fd && s.loaded_any) {
    // The file goes on past the first window: load the next ones ahead on a thread of their own.
    try {
      std::thread(Shared::load_ahead, shared_).detach();
      s.ahead = true;
    } catch (const std::system_error&) {
      // no thread: this one loads each window when it is asked for
    }
  }
  if (s.ahead)
    s.changed.wait(lock, [&] { return !s.ready.empty() || s.loading_ended; });
  else if (s.ready.empty() && !s.loading_ended)
    s.load_next(lock);
  if (s.ready.empty()) {
    s.finished = true;
    // Zero bytes in place of a tail cut off the file are no error of the mapping: the size says.
    struct stat st {};
    if (s.limit > 0 && ::fstat(s.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < s.limit)
      return std::unexpected(shrank_error(s.name));
    return Chunk{};
  }
  s.current.emplace(std::move(s.ready.front()));
  s.ready.pop_front();
  s.changed.notify_all();
  if (s.current->error) {
    s.finished = true;
    Error e = std::move(*s.current->error);
    s.current.reset();
    return std::unexpected(std::move(e));
  }
  // The first window may begin before `start` (at its page): those bytes are not handed out.
  const size_t skip = std::min(s.skip, s.current->bytes);
  s.skip = 0;
  return Chunk{std::string_view(s.current->data + skip, s.current->bytes - skip),
               s.current->readable - skip};
}

}  // namespace ctxkit::util
