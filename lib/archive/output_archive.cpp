#include "archive/output_archive.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "archive/output_preview.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace ctxkit::archive {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
bool handle_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

Result<OutputMeta> read_meta(const fs::path& path, const std::string& handle) {
  util::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.follow_links = false;
  auto text = util::read_file(path, limits);
  if (!text) {
    if (text.error().kind == Error::Kind::NotFound)
      return fail(fmt::format("no archived output '{}'", handle), Error::Kind::NotFound);
    return fail(text.error().message, text.error().kind);
  }
  try {
    json j = util::parse_json_or_throw(*text);
    OutputMeta m;
    m.handle = handle;
    m.tool_use_id = j.value("tool_use_id", "");
    m.session_id = j.value("session_id", "");
    m.tool_name = j.value("tool_name", "");
    m.project = j.value("project", "");
    m.cwd = j.value("cwd", "");
    m.at_ms = j.value("at_ms", int64_t{0});
    m.bytes = j.value("bytes", uint64_t{0});
    m.lines = j.value("lines", uint64_t{0});
    m.chars = j.value("chars", uint64_t{0});
    return m;
  } catch (const std::exception& e) {
    return fail(fmt::format("reading {}: {}", path.string(), e.what()), Error::Kind::Corrupt);
  }
}
}  // namespace

bool valid_output_handle(std::string_view text) {
  return !text.empty() && text.size() <= 100 && std::all_of(text.begin(), text.end(), handle_char);
}

std::string output_handle(std::string_view tool_use_id) {
  if (valid_output_handle(tool_use_id)) return std::string(tool_use_id);
  util::Fnv1a h;
  h.add(tool_use_id);
  return fmt::format("h-{:016x}", h.value);
}

fs::path outputs_dir(const core::Locations& loc) {
  return loc.archive_dir() / "tool-outputs";
}

Result<OutputWriter> OutputWriter::create(const core::Locations& loc, const std::string& handle) {
  if (!valid_output_handle(handle))
    return fail(fmt::format("'{}' is not an output handle", handle), Error::Kind::Invalid);
  const fs::path dir = outputs_dir(loc);
  if (auto r = util::make_private_dirs(dir, loc.state_dir); !r) return fail(r.error().message);
  auto file = util::AtomicFile::create(dir / (handle + ".txt"), 0600);
  if (!file) return fail(file.error().message);
  return OutputWriter(dir, handle, std::move(*file));
}

Result<void> OutputWriter::commit(const OutputMeta& meta) {
  // The output's own data is flushed, not fsynced: the client's transcript, which the archive's
  // other copies come from, is not fsynced either.
  if (auto r = file_.commit(util::Durability::Flush); !r) return r;
  json j{{"handle", meta.handle},         {"tool_use_id", meta.tool_use_id},
         {"session_id", meta.session_id}, {"tool_name", meta.tool_name},
         {"project", meta.project},       {"cwd", meta.cwd},
         {"at_ms", meta.at_ms},           {"bytes", meta.bytes},
         {"lines", meta.lines},           {"chars", meta.chars}};
  const std::string text = util::dump_json(j, -1, util::BadUtf8::replace) + "\n";
  if (auto r =
          util::write_file_atomic(dir_ / (handle_ + ".json"), text, 0600, util::Durability::Flush);
      !r) {
    std::error_code ec;
    fs::remove(dir_ / (handle_ + ".txt"), ec);
    return r;
  }
  return {};
}

namespace {
fs::path capped_file(const core::Locations& loc, const std::string& session_id) {
  return outputs_dir(loc) / "sessions" / (output_handle(session_id) + ".tokens");
}

// The lines of a session's file (nothing when there is none, or it cannot be read).
std::string capped_text(const core::Locations& loc, const std::string& session_id) {
  if (session_id.empty()) return {};
  util::ReadLimits limits;
  limits.max_bytes = 16 << 20;
  limits.follow_links = false;
  auto text = util::read_file(capped_file(loc, session_id), limits);
  return text ? std::move(*text) : std::string();
}

template <class F>
void each_line(std::string_view rest, F f) {
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    f(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
}
}  // namespace

Result<void> record_capped_output(const core::Locations& loc, const std::string& session_id,
                                  uint64_t tokens, const std::string& event) {
  const fs::path dir = outputs_dir(loc) / "sessions";
  if (auto r = util::make_private_dirs(dir, loc.state_dir); !r) return r;
  if (event.find('\n') != std::string::npos)
    return fail("a capped output's event must be one line", Error::Kind::Invalid);
  return util::append_private_line(
      capped_file(loc, session_id),
      event.empty() ? fmt::format("{}", tokens) : fmt::format("{}\t{}", tokens, event));
}

uint64_t capped_tokens(const core::Locations& loc, const std::string& session_id) {
  uint64_t sum = 0;
  each_line(capped_text(loc, session_id), [&](std::string_view line) {
    line = line.substr(0, line.find('\t'));
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec == std::errc() && p == line.data() + line.size()) sum += v;
  });
  return sum;
}

std::vector<CappedOutputEvent> capped_output_events(const core::Locations& loc,
                                                    const std::string& session_id) {
  std::vector<CappedOutputEvent> out;
  each_line(capped_text(loc, session_id), [&](std::string_view line) {
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) return;
    const std::string_view data = line.substr(tab + 1);
    if (util::json_depth(data, 16) > 16) return;
    const json j = util::parse_json(data);
    if (!j.is_object()) return;
    const auto at = j.find("at_ms");
    if (at == j.end() || !at->is_number_integer()) return;
    out.push_back({at->get<int64_t>(), std::string(data)});
  });
  return out;
}

Result<OutputRange> parse_output_range(std::string_view text, bool bytes) {
  OutputRange r;
  r.bytes = bytes;
  r.from = bytes ? 0 : 1;
  const auto bad = [&]() {
    return fail(fmt::format("{} '{}' is not A:B, A: or :B", bytes ? "bytes" : "lines", text),
                Error::Kind::Invalid);
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  auto number = [](std::string_view s, uint64_t& out) {
    if (s.empty()) return true;
    if (s.size() > 18) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (!number(text.substr(0, colon), r.from) || !number(text.substr(colon + 1), r.to)) return bad();
  if (!bytes && r.from == 0) return bad();
  if (r.to != 0 && r.to < r.from + (bytes ? 1 : 0))
    return fail(
        fmt::format("{} '{}': the end comes before the start", bytes ? "bytes" : "lines", text),
        Error::Kind::Invalid);
  return r;
}

Result<OutputSlice> read_output(const core::Locations& loc, const std::string& handle,
                                const OutputRange& range, const std::string& search,
                                size_t max_bytes) {
  if (!valid_output_handle(handle))
    return fail(
        fmt::format("'{}' is not an output handle (the \"handle\" a capped output names)", handle),
        Error::Kind::Invalid);
  const fs::path dir = outputs_dir(loc);
  auto meta = read_meta(dir / (handle + ".json"), handle);
  if (!meta) return fail(meta.error().message, meta.error().kind);
  const fs::path path = dir / (handle + ".txt");
  auto opened = util::open_regular_file(path, false);
  if (!opened) return fail(opened.error().message, opened.error().kind);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{opened->fd};
  OutputSlice out;
  out.meta = std::move(*meta);
  const uint64_t size = opened->size;
  const std::string needle = util::ascii_lower(search);

  // One pass from the start: line numbers need it (an output is read whole only when the range
  // asked for reaches its end).
  std::string buf(1 << 16, '\0');
  std::string line;  // the current line, while it is in the range
  uint64_t line_no = 1, offset = 0;
  bool in_text = true;  // still taking text (under max_bytes)
  auto in_range_line = [&](uint64_t n) {
    return n >= range.from && (range.to == 0 || n <= range.to);
  };
  auto finish_line = [&](bool complete) {
    // `line` holds the line without its '\n' (with it when complete).
    if (!needle.empty()) {
      if (util::ascii_lower(line).find(needle) != std::string::npos) {
        if (out.matches.size() < kMaxOutputMatches) {
          std::string t = line.substr(0, utf8_cut_before(line, 300));
          while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
          out.matches.push_back({line_no, std::move(t)});
        } else {
          out.more_matches = true;
        }
      }
    } else if (in_text) {
      if (out.text.size() + line.size() > max_bytes) {
        in_text = false;
        out.cut = true;
        if (out.text.empty()) {  // one line longer than the answer: its start
          out.text = line.substr(0, utf8_cut_before(line, max_bytes));
          out.first_line = out.last_line = line_no;
        }
      } else {
        if (out.text.empty()) out.first_line = line_no;
        out.text += line;
        out.last_line = line_no;
      }
    }
    (void)complete;
    line.clear();
  };

  if (range.bytes) {
    if (!needle.empty())
      return fail("a search goes over lines: give lines (or nothing) with it",
                  Error::Kind::Invalid);
    const uint64_t from = range.from;
    const uint64_t to = std::min<uint64_t>(range.to == 0 ? size : range.to, size);
    if (from >= size && size > 0)
      return fail(fmt::format("bytes {}: the output has {} bytes", from, size),
                  Error::Kind::Invalid);
    uint64_t want = to > from ? to - from : 0;
    if (want > max_bytes) {
      want = max_bytes;
      out.cut = true;
    }
    std::string data(static_cast<size_t>(want), '\0');
    if (want > 0) {
      if (int e = util::read_all_at(opened->fd, data.data(), data.size(), from); e != 0)
        return fail(fmt::format("reading {}: {}", path.string(), std::strerror(e)));
    }
    // Never a cut UTF-8 sequence at either end.
    const size_t start = utf8_cut_after(data, 0);
    const size_t end = utf8_cut_before(data, data.size());
    out.from_byte = from + start;
    out.to_byte = from + std::max(start, end);
    { out.text = data.substr(start, std::max(start, end) - start); }
    return out;
  }

  if (range.from > std::max<uint64_t>(out.meta.lines, 1))
    return fail(fmt::format("lines {}: the output has {} lines", range.from, out.meta.lines),
                Error::Kind::Invalid);
  for (;;) {
    const ssize_t n = ::read(opened->fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("reading {}: {}", path.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const size_t take = nl == std::string_view::npos ? chunk.size() : nl + 1;
      if (in_range_line(line_no)) line.append(chunk.substr(0, take));
      offset += take;
      if (nl != std::string_view::npos) {
        if (in_range_line(line_no)) finish_line(true);
        ++line_no;
      }
      chunk.remove_prefix(take);
    }
    if (range.to != 0 && line_no > range.to) break;
    if (needle.empty() && !in_text) break;
  }
  if (!line.empty() && in_range_line(line_no)) finish_line(false);
  return out;
}

}  // namespace ctxkit::archive
