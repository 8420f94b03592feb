#include "apps/cap_app.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "archive/output_archive.hpp"
#include "archive/output_preview.hpp"
#include "claude/tool_output.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/project_folder.hpp"
#include "util/json_io.hpp"
#include "util/regular_file.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-cap";
// The client's file of a whole output is read in pieces of this size.
constexpr size_t kSlice = 1 << 20;

// The payload held in memory. A small one grows with realloc; from 2 MiB on it is an anonymous
// mapping grown with mremap (never copied) and asked for huge pages: on this kind of machine
// each first touch of a 4 KiB page costs about as much as copying 40 KiB, and a 10 MB output is
// 2,560 of them, or 5 huge ones. Either way an output of N bytes takes about N bytes of memory.
struct Buffer {
  static constexpr size_t kHuge = size_t{2} << 20;
  char* data = nullptr;
  size_t size = 0, cap = 0;
  bool mapped = false;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (mapped)
      ::munmap(data, cap);
    else
      std::free(data);
  }
  bool reserve(size_t want) {
    if (want <= cap) return true;
    size_t next = cap ? cap : (size_t{1} << 16);
    while (next < want) next *= 2;
    if (next < kHuge) {
      void* p = std::realloc(data, next);
      if (!p) return false;
      data = static_cast<char*>(p);
      cap = next;
      return true;
    }
    next = (next + kHuge - 1) / kHuge * kHuge;
    void* p = MAP_FAILED;
    if (mapped) {
      p = ::mremap(data, cap, next, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) return false;
    } else {
      // Placed on a huge page's boundary: map one more huge page and give back the ends.
      void* raw =
          ::mmap(nullptr, next + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) return false;
      const auto start = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
      if (aligned > start) ::munmap(raw, aligned - start);
      const uintptr_t end = start + next + kHuge;
      if (end > aligned + next)
        ::munmap(reinterpret_cast<void*>(aligned + next), end - aligned - next);
      p = reinterpret_cast<void*>(aligned);
      if (size) std::memcpy(p, data, size);
      std::free(data);
      mapped = true;
    }
    (void)::madvise(p, next, MADV_HUGEPAGE);  // a hint: without it, 4 KiB pages
    data = static_cast<char*>(p);
    cap = next;
    return true;
  }
};

Result<void> read_fd(int fd, Buffer& buf) {
  // A file on stdin: its size at once (a pipe, the client's way, grows the buffer as it comes).
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      !buf.reserve(static_cast<size_t>(st.st_size) + 1))
    return fail("reading stdin: out of memory");
  for (;;) {
    if (buf.size == buf.cap && !buf.reserve(buf.cap * 2 + 1))
      return fail("reading stdin: out of memory");
    const ssize_t n = ::read(fd, buf.data + buf.size, buf.cap - buf.size);
    if (n > 0) {
      buf.size += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return {};
    if (errno == EINTR) continue;
    return fail(fmt::format("reading stdin: {}", std::strerror(errno)));
  }
}

Result<void> read_payload(AppContext& ctx, Buffer& buf) {
  // This process's own stdin is read straight into the buffer; a context of a test hands it over.
  if (auto* f = ctx.read_stdin.target<Result<std::string> (*)()>();
      f && *f == &read_process_stdin) {
    if (::isatty(0))
      return fail("expected a JSON payload on stdin (stdin is a terminal)", Error::Kind::Invalid);
    return read_fd(0, buf);
  }
  auto text = ctx.read_stdin();
  if (!text) return fail(text.error().message);
  if (!buf.reserve(text->size() + 1)) return fail("reading stdin: out of memory");
  std::memcpy(buf.data, text->data(), text->size());
  buf.size = text->size();
  return {};
}

struct Note {
  std::string text;
  void add(const std::string& t) {
    if (text.empty() && !t.empty()) text = t;
  }
};

std::optional<int> parse_command_line(const std::vector<std::string>& args, AppContext& ctx) {
  if (args.empty()) return std::nullopt;
  ProgramCli cli(kTool,
                 "PostToolUse hook: a Bash or MCP output over its threshold is archived whole and "
                 "the model gets its head and tail and the handle to fetch the rest.");
  std::string event;
  cli.add_show_config();
  cli.add_version();
  cli.app().add_option("event", event,
                       "hook event name (informational; the payload's own name is used)");
  return cli.parse(args, ctx);
}

// Characters of a text (bytes that are not UTF-8 continuation bytes).
uint64_t chars_of(std::string_view text) {
  return text.size() - archive::count_bytes(text).continuations;
}

// Feeds `text` to the archive and the preview (a large text is written as it is, from the
// payload's buffer: the archive's own buffer takes only small pieces).
void feed(std::string_view text, archive::OutputWriter& writer, archive::PreviewBuilder& preview) {
  if (text.empty()) return;
  writer.write(text);
  preview.add(text);
}

Result<void> feed_file(const std::string& path, archive::OutputWriter& writer,
                       archive::PreviewBuilder& preview) {
  auto opened = util::open_regular_file(path, false);
  if (!opened) return fail(opened.error().message);
  std::string buf(kSlice, '\0');
  Result<void> out;
  for (;;) {
    const ssize_t n = ::read(opened->fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out = fail(fmt::format("reading {}: {}", path, std::strerror(errno)));
      break;
    }
    if (n == 0) break;
    const std::string_view chunk(buf.data(), static_cast<size_t>(n));
    writer.write(chunk);
    preview.add(chunk);
  }
  ::close(opened->fd);
  return out;
}
}  // namespace

int run_cap(const std::vector<std::string>& args, AppContext& ctx) {
  if (auto rc = parse_command_line(args, ctx)) return *rc;
  // A file-size limit makes a write fail (EFBIG) rather than end the process.
  std::signal(SIGXFSZ, SIG_IGN);
  Note note;
  auto done = [&]() {
    if (!note.text.empty()) print_note(ctx.err, kTool, note.text);
    return exit_code(ExitCode::ok);
  };

  Buffer buf;
  if (auto r = read_payload(ctx, buf); !r) {
    note.add("output passed through: " + r.error().message);
    return done();
  }
  auto payload = claude::scan_tool_payload(buf.data, buf.size);
  if (!payload) {
    note.add("output passed through: " + payload.error().message);
    return done();
  }
  // PostToolUseFailure ignores a replacement: a failed command's output stays as it is.
  if (payload->hook_event_name != "PostToolUse" || payload->kind == claude::OutputKind::Other)
    return done();

  // The output's size in bytes: at most that many characters.
  uint64_t bytes = 0;
  const bool persisted =
      payload->kind == claude::OutputKind::Bash && !payload->persisted_path.empty();
  if (payload->kind == claude::OutputKind::Bash) {
    bytes = payload->stdout_text.size() + payload->stderr_text.size() + 1;
  } else {
    for (auto t : payload->texts) bytes += t.size() + 1;
  }

  const std::string cwd(payload->cwd);
  const auto project = core::project_start_dir(ctx.env, cwd);
  core::Config cfg = core::load_config(ctx.env, {project});
  const auto threshold = cfg.cap.threshold_for(payload->tool_name);
  if (!threshold) return done();
  if (!persisted && bytes <= static_cast<uint64_t>(*threshold)) return done();
  const core::Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);
  const std::string folder = core::project_folder_name(project.string());
  if (cfg.archive.excludes(folder)) {
    note.add(fmt::format("output not capped: project {} is excluded from the archive", folder));
    return done();
  }
  if (payload->tool_use_id.empty()) {
    note.add("output not capped: the payload names no tool_use_id");
    return done();
  }

  const std::string handle = archive::output_handle(payload->tool_use_id);
  auto writer = archive::OutputWriter::create(loc, handle);
  if (!writer) {
    note.add("output not capped: " + writer.error().message);
    return done();
  }
  archive::PreviewLimits limits;
  limits.head_bytes = static_cast<size_t>(cfg.cap.head_chars);
  limits.tail_bytes = static_cast<size_t>(cfg.cap.tail_chars);
  archive::PreviewBuilder preview(limits);
  if (persisted) {
    // The client keeps only the first 30,000 characters in stdout; the whole output is in its
    // file in the session's folder.
    const std::string path(payload->persisted_path);
    const size_t at = path.rfind("/tool-results/");
    const std::string session = "/" + std::string(payload->session_id);
    if (at == std::string::npos || payload->session_id.empty() ||
        !std::string_view(path).substr(0, at).ends_with(session) ||
        path.find("/../") != std::string::npos || path.find("/./") != std::string::npos) {
      note.add(
          "output not capped: the client's file of the whole output is not in the session's "
          "folder");
      return done();
    }
    if (auto r = feed_file(path, *writer, preview); !r) {
      note.add("output not capped: " + r.error().message);
      return done();
    }
  } else if (payload->kind == claude::OutputKind::Bash) {
    feed(payload->stdout_text, *writer, preview);
    if (!payload->stderr_text.empty()) {
      if (!payload->stdout_text.empty() && !payload->stdout_text.ends_with('\n'))
        feed("\n", *writer, preview);
      feed(payload->stderr_text, *writer, preview);
    }
  } else {
    for (size_t i = 0; i < payload->texts.size(); ++i) {
      if (i > 0) feed("\n", *writer, preview);
      feed(payload->texts[i], *writer, preview);
    }
  }
  if (preview.figures().chars <= static_cast<uint64_t>(*threshold) || !preview.worth_capping())
    return done();
  const std::string text = preview.preview(handle);
  const archive::PreviewFigures fig = preview.figures();

  archive::OutputMeta meta;
  meta.handle = handle;
  meta.tool_use_id = std::string(payload->tool_use_id);
  meta.session_id = std::string(payload->session_id);
  meta.tool_name = std::string(payload->tool_name);
  meta.project = folder;
  meta.cwd = cwd;
  meta.at_ms = util::now_ms();
  meta.bytes = fig.bytes;
  meta.lines = fig.lines;
  meta.chars = fig.chars;
  if (auto r = writer->commit(meta); !r) {
    note.add("output not capped: " + r.error().message);
    return done();
  }

  const uint64_t kept_chars = chars_of(text);
  const uint64_t tokens = fig.chars > kept_chars ? (fig.chars - kept_chars) / 4 : 0;
  // What was capped, for ctx-status and the session's page; failing here loses no byte of the
  // output.
  const nlohmann::json event{{"at_ms", meta.at_ms},      {"tool", meta.tool_name},
                             {"handle", handle},         {"tool_use_id", meta.tool_use_id},
                             {"bytes", fig.bytes},       {"lines", fig.lines},
                             {"chars", fig.chars},       {"kept_chars", kept_chars},
                             {"tokens_kept_out", tokens}};
  if (auto r = archive::record_capped_output(loc, meta.session_id, tokens,
                                             util::dump_json(event, -1, util::BadUtf8::replace));
      !r)
    note.add("capped, not counted: " + r.error().message);
  ctx.out << claude::cap_response(*payload, text) << '\n';
  return done();
}

}  // namespace ctxkit::apps
