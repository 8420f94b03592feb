#include "trim/trim_session.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "archive/archive.hpp"
#include "archive/session_archiver.hpp"
#include "claude/transcript_head.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
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
  std::string text = m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > width) {
    m.erase("archive_file");
    m.erase("trim_params");
    text = m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (text.size() > width) text = "{}";
  // Pad inside the object with spaces (valid JSON whitespace) to exactly `width` bytes.
  text.insert(text.size() - 1, std::string(width - text.size(), ' '));
  return text;
}

uint64_t count_newlines(const fs::path& p, uint64_t from, uint64_t to) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t n = 0;
  std::string buf(1 << 20, '\0');
  for (uint64_t pos = from; pos < to;) {
    ssize_t r =
        ::pread(fd, buf.data(), std::min<uint64_t>(buf.size(), to - pos), static_cast<off_t>(pos));
    if (r <= 0) break;
    for (ssize_t i = 0; i < r; ++i) n += buf[static_cast<size_t>(i)] == '\n';
    pos += static_cast<uint64_t>(r);
  }
  ::close(fd);
  return n;
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
    if (auto r = util::make_private_dirs(folder, folder.parent_path()); !r)
      return std::unexpected(r.error());
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
    if (auto r = archive->commit(util::Durability::Fsync); !r) return std::unexpected(r.error());
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
    if (auto r = output->commit(util::Durability::Fsync); !r) return std::unexpected(r.error());
    out.written = true;
    out.output = output_path;
    if (auto r = archive::copy_side_folder(req.transcript.parent_path() / out.session_id,
                                           req.transcript.parent_path() / req.new_session_id);
        !r)
      return std::unexpected(r.error());
  }
  if (::stat(req.transcript.c_str(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) > out.snapshot_bytes) {
    out.late_bytes = static_cast<uint64_t>(st.st_size) - out.snapshot_bytes;
    out.late_lines =
        count_newlines(req.transcript, out.snapshot_bytes, static_cast<uint64_t>(st.st_size));
  }
  return out;
}

}  // namespace ctxkit::trim
