#include "trim/trim_session.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "archive/archive.hpp"
#include "archive/session_archiver.hpp"
#include "claude/transcript_head.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/line_reader.hpp"

namespace ctxkit::trim {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
// The first line gets a fixed-size slot for trim_metadata, filled in once the totals are known.
constexpr size_t kMetadataSlot = 4096;

std::string render_metadata(const TrimRequest& req, const TrimOutcome& out, size_t width) {
  ojson m;
  m["parent_file"] = req.transcript.string();
  m["parent_session_id"] = out.session_id;
  if (!req.archive_transcript.empty()) m["archive_file"] = req.archive_transcript.string();
  m["trimmed_at"] = req.trimmed_at;
  m["trim_params"] = {
      {"threshold", req.threshold}, {"target_tools", req.tools}, {"keep_recent", req.keep_recent}};
  const TrimStats& s = out.stats;
  m["stats"] = {{"results_trimmed", s.results_trimmed}, {"inputs_trimmed", s.inputs_trimmed},
                {"images_replaced", s.images_replaced}, {"chars_saved", s.chars_saved},
                {"tokens_saved", s.tokens_saved()},     {"lines", s.lines},
                {"lines_changed", s.lines_changed}};
  m["tool"] = req.tool_version;
  std::string text = util::dump_json(m, -1, util::BadUtf8::replace);
  if (text.size() > width) {
    m.erase("archive_file");
    m.erase("trim_params");
    text = util::dump_json(m, -1, util::BadUtf8::replace);
  }
  if (text.size() > width) text = "{}";
  // Pad inside the object with spaces (valid JSON whitespace) to exactly `width` bytes.
  text.insert(text.size() - 1, std::string(width - text.size(), ' '));
  return text;
}

// Newlines in bytes [from, to) of the file (fewer if it is shorter), read a piece at a time.
uint64_t count_newlines(const fs::path& p, uint64_t from, uint64_t to) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t n = 0;
  std::string buf(256 << 10, '\0');  // fits the second-level cache
  for (uint64_t pos = from; pos < to;) {
    ssize_t r =
        ::pread(fd, buf.data(), std::min<uint64_t>(buf.size(), to - pos), static_cast<off_t>(pos));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    const char* c = buf.data();
    const char* const end = c + r;
    while ((c = static_cast<const char*>(std::memchr(c, '\n', static_cast<size_t>(end - c))))) {
      ++n;
      ++c;
    }
    pos += static_cast<uint64_t>(r);
  }
  ::close(fd);
  return n;
}

// The offset just after the first newline at or after `at` and before `limit` (nullopt: none).
std::optional<uint64_t> line_boundary_after(int fd, uint64_t at, uint64_t limit) {
  char buf[64 << 10];
  for (uint64_t pos = at; pos < limit;) {
    ssize_t r =
        ::pread(fd, buf, std::min<uint64_t>(sizeof buf, limit - pos), static_cast<off_t>(pos));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    if (const void* nl = std::memchr(buf, '\n', static_cast<size_t>(r)))
      return pos + static_cast<uint64_t>(static_cast<const char*>(nl) - buf) + 1;
    pos += static_cast<uint64_t>(r);
  }
  return std::nullopt;
}

// The CPUs this process may run on (its affinity mask: `taskset`, a container's cpuset), or the
// machine's when the mask cannot be read.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

struct Scanned {
  TrimStats stats;
  uint64_t consumed = 0;  // end of the last complete line
};

// Where a line put aside is in the file.
struct PutAside {
  uint64_t offset = 0, length = 0, number = 0;
};

Result<void> feed(util::LineReader& reader, Trimmer& trimmer, std::vector<PutAside>* put_aside) {
  while (true) {
    auto line = reader.next();
    if (!line) return std::unexpected(line.error());
    if (!*line) return {};
    trimmer.process((*line)->text, (*line)->capacity, (*line)->number, nullptr);
    if (put_aside && trimmer.last_line_deferred())
      put_aside->push_back({(*line)->offset, (*line)->text.size(), (*line)->number});
  }
}

// A dry run's figures, the file read in two parts on two threads (see Trimmer::start_mid_file);
// nullopt when it is too small to split, has no line boundary to split at, or no second thread
// can be had (the caller then reads it in one).
Result<std::optional<Scanned>> scan_in_two(const fs::path& transcript, uint64_t snapshot,
                                           const TrimOptions& opt, const TrimRequest& req) {
  if (snapshot < req.split_at_least || usable_cpus() < 2) return std::nullopt;
  int fd = ::open(transcript.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("reading {}: {}", transcript.string(), std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const auto boundary = line_boundary_after(
      fd,
      static_cast<uint64_t>(static_cast<double>(snapshot) * std::clamp(req.first_part, 0.0, 1.0)),
      snapshot);
  if (!boundary || *boundary >= snapshot) return std::nullopt;
  const uint64_t split = *boundary;
  Trimmer first(opt), second(opt);
  second.start_mid_file();
  std::vector<PutAside> put_aside;
  Result<void> second_done = fail("not read");
  uint64_t consumed = 0;
  auto read_second = [&] {
    // Numbered from 1: `first` knows how many lines come before once it is done.
    auto reader = util::LineReader::open_read_ahead(transcript, snapshot, 1 << 20, split, 1);
    if (!reader) {
      second_done = std::unexpected(reader.error());
      return;
    }
    second_done = feed(*reader, second, &put_aside);
    consumed = reader->consumed();
  };
  std::optional<std::thread> other;
  try {
    other.emplace(read_second);
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  auto reader = util::LineReader::open_read_ahead(transcript, split);
  Result<void> first_done =
      reader ? feed(*reader, first, nullptr) : Result<void>(std::unexpected(reader.error()));
  other->join();
  if (first_done && reader->consumed() != split)
    first_done =
        fail(fmt::format("reading {}: the file shrank while it was read", transcript.string()));
  if (!first_done || !second_done)
    return std::unexpected(!first_done ? first_done.error() : second_done.error());
  // The lines put aside, read again (each with zero padding after it) and fed to `rest`.
  const uint64_t before = first.stats().lines;
  Trimmer rest(opt);
  rest.continue_after(first);
  std::string text;
  for (size_t i = 0; i < put_aside.size(); ++i) {
    const auto& where = put_aside[i];
    const size_t length = static_cast<size_t>(where.length);
    text.assign(length + util::LineReader::kPadding, '\0');
    if (int e = util::read_all_at(fd, text.data(), length, where.offset))
      return fail(
          fmt::format("reading {}: {}", transcript.string(),
                      e == ENODATA ? "the file shrank while it was read" : std::strerror(e)));
    rest.recall_names(second, i);
    rest.process(std::string_view(text.data(), length), text.size(), before + where.number,
                 nullptr);
  }
  return Scanned{Trimmer::join(first, second, rest), consumed};
}
}  // namespace

Result<void> check_is_transcript(const fs::path& transcript) {
  auto head = claude::read_transcript_head(transcript);
  if (!head) return std::unexpected(head.error());
  if (!head->is_transcript) return std::unexpected(claude::not_a_transcript(transcript, *head));
  return {};
}

Result<TrimOutcome> trim_session(const TrimRequest& req) {
  auto head = claude::read_transcript_head(req.transcript);
  if (!head) return std::unexpected(head.error());
  if (!head->is_transcript) return std::unexpected(claude::not_a_transcript(req.transcript, *head));
  TrimOutcome out;
  out.session_id = req.transcript.stem().string();
  out.cwd = head->cwd;
  out.first_timestamp = head->first_timestamp;
  struct stat st {};
  if (::stat(req.transcript.c_str(), &st) != 0)
    return fail(fmt::format("reading {}: {}", req.transcript.string(), std::strerror(errno)));
  const uint64_t snapshot = static_cast<uint64_t>(st.st_size);
  if (req.after_snapshot) req.after_snapshot();

  TrimOptions opt;
  opt.threshold = req.threshold;
  opt.tools = req.tools;
  opt.new_session_id = req.dry_run ? std::string() : req.new_session_id;
  opt.notice_file =
      req.archive_transcript.empty() ? req.transcript.string() : req.archive_transcript.string();

  if (req.keep_recent > 0) {
    Trimmer scan(opt);
    auto reader = util::LineReader::open_read_ahead(req.transcript, snapshot);
    if (!reader) return std::unexpected(reader.error());
    while (true) {
      auto line = reader->next();
      if (!line) return std::unexpected(line.error());
      if (!*line) break;
      scan.prescan((*line)->text, (*line)->capacity);
    }
    opt.protected_tool_use_ids = scan.tool_use_ids_of_last_responses(req.keep_recent);
  }

  // Lines that arrived after the snapshot (the session went on): counted for the message.
  auto note_late = [&](TrimOutcome& o) {
    if (::stat(req.transcript.c_str(), &st) == 0 &&
        static_cast<uint64_t>(st.st_size) > o.snapshot_bytes) {
      o.late_bytes = static_cast<uint64_t>(st.st_size) - o.snapshot_bytes;
      o.late_lines =
          count_newlines(req.transcript, o.snapshot_bytes, static_cast<uint64_t>(st.st_size));
    }
  };
  if (req.dry_run) {
    auto two = scan_in_two(req.transcript, snapshot, opt, req);
    if (!two) return std::unexpected(two.error());
    if (*two) {
      out.stats = std::move((*two)->stats);
      out.snapshot_bytes = (*two)->consumed;
      out.parts = 2;
      note_late(out);
      return out;
    }
  }

  Trimmer trimmer(opt);
  auto reader = util::LineReader::open_read_ahead(req.transcript, snapshot);
  if (!reader) return std::unexpected(reader.error());

  // The archive is written under archive_session's lock: a hook archiving the same session waits
  // for this copy (and then appends only what came after it) instead of racing it.
  std::optional<util::FileLock> archive_lock;
  const archive::ArchiveLocation where{req.archive_transcript, req.archive_side_dir};
  if (!req.dry_run && !req.archive_transcript.empty()) {
    // archive/<project>/: private, tightened when too open, never through a link.
    const fs::path folder = req.archive_transcript.parent_path();
    CTXKIT_TRY(util::make_private_dirs(folder, folder.parent_path()));
    auto lock = archive::lock_session_archive(where);
    if (!lock) return std::unexpected(lock.error());
    archive_lock.emplace(std::move(*lock));
  }
  const bool write_archive = archive_lock && archive_needs_update(where, snapshot);
  std::optional<util::AtomicFile> archive, output;
  if (write_archive) {
    auto a = util::AtomicFile::create(req.archive_transcript, 0600);
    if (!a) return std::unexpected(a.error());
    archive.emplace(std::move(*a));
  }
  fs::path output_path = req.transcript.parent_path() / (req.new_session_id + ".jsonl");
  if (!req.dry_run) {
    auto o = util::AtomicFile::create(output_path, 0600);
    if (!o) return std::unexpected(o.error());
    output.emplace(std::move(*o));
  }

  std::string line_out;
  uint64_t metadata_offset = 0;
  bool metadata_placed = false;
  while (true) {
    auto next = reader->next();
    if (!next) return std::unexpected(next.error());
    if (!*next) break;
    const auto& line = **next;
    if (archive) {
      archive->write(line.text);
      archive->write("\n");
    }
    if (!output) {
      trimmer.process(line.text, line.capacity, line.number, nullptr);
      continue;
    }
    line_out.clear();
    trimmer.process(line.text, line.capacity, line.number, &line_out);
    if (line.number == 1) {
      // trim_metadata goes first in the first line; a line that is not an object gets its own.
      std::string slot = "{\"trim_metadata\":";
      if (!line_out.empty() && line_out.front() == '{') {
        output->write(slot);
        metadata_offset = output->size();
        output->write(std::string(kMetadataSlot, ' '));
        size_t inner = line_out.find_first_not_of(" \t\r", 1);
        bool empty_object = inner != std::string::npos && line_out[inner] == '}';
        output->write(empty_object ? "" : ",");
        output->write(std::string_view(line_out).substr(1));
      } else {
        output->write(slot);
        metadata_offset = output->size();
        output->write(std::string(kMetadataSlot, ' '));
        output->write("}\n");
        output->write(line_out);
      }
      metadata_placed = true;
    } else {
      output->write(line_out);
    }
    output->write("\n");
  }
  out.snapshot_bytes = reader->consumed();
  out.stats = trimmer.stats();
  if (archive) {
    CTXKIT_TRY(archive->commit(util::Durability::Fsync));
    out.archived = true;
  }
  if (!req.dry_run && !req.archive_side_dir.empty()) {
    if (auto r = archive::copy_side_folder(req.transcript.parent_path() / out.session_id,
                                           req.archive_side_dir);
        !r)
      return std::unexpected(r.error());
  }
  archive_lock.reset();
  if (output && out.stats.tokens_saved() >= req.min_tokens_saved && metadata_placed) {
    output->overwrite(metadata_offset, render_metadata(req, out, kMetadataSlot));
    out.output_bytes = output->size();
    CTXKIT_TRY(output->commit(util::Durability::Fsync));
    out.written = true;
    out.output = output_path;
    if (auto r = archive::copy_side_folder(req.transcript.parent_path() / out.session_id,
                                           req.transcript.parent_path() / req.new_session_id);
        !r)
      return std::unexpected(r.error());
  }
  note_late(out);
  return out;
}

}  // namespace ctxkit::trim
