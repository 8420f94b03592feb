#include "claude/transcript_head.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include "util/line_reader.hpp"
#include "util/utf8.hpp"

namespace ctxkit::claude {
namespace od = simdjson::ondemand;

namespace {
// Reads the top-level fields of one padded line; false when it is not a JSON object.
bool read_fields(od::parser& parser, simdjson::padded_string_view view, HeadLine& out) {
  od::document doc;
  if (parser.iterate(view).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  bool has_type = false, has_uuid = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    auto take = [&](std::optional<std::string>& into) {
      std::string_view s;
      if (!into && !v.get_string().get(s)) into = std::string(s);
    };
    if (key == "sessionId") {
      out.session_line = true;
      take(out.session_id);
    } else if (key == "cwd") {
      take(out.cwd);
    } else if (key == "timestamp") {
      take(out.timestamp);
    } else if (key == "type") {
      od::json_type t;
      has_type = !v.type().get(t) && t == od::json_type::string;
    } else if (key == "uuid") {
      has_uuid = true;
    }
    // Any other value is skipped by the iterator (a depth count, no recursion).
  }
  if (has_type && has_uuid) out.session_line = true;
  return true;
}
}  // namespace

std::optional<HeadLine> parse_head_line(std::string_view line) {
  od::parser parser;
  HeadLine out;
  simdjson::padded_string padded(line);
  if (read_fields(parser, padded, out)) return out;
  if (util::is_valid_utf8(line)) return std::nullopt;
  out = {};
  simdjson::padded_string clean(util::sanitize_json_text(line));
  if (read_fields(parser, clean, out)) return out;
  return std::nullopt;
}

Result<TranscriptHead> read_transcript_head(const std::filesystem::path& transcript,
                                            HeadLimits limits) {
  auto reader = util::LineReader::open(transcript, limits.max_bytes, 1 << 20);
  if (!reader) return std::unexpected(reader.error());
  TranscriptHead head;
  od::parser parser;
  while (head.lines_read < limits.max_lines) {
    auto next = reader->next();
    if (!next) return std::unexpected(next.error());
    if (!*next) break;
    const auto& line = **next;
    ++head.lines_read;
    HeadLine fields;
    bool ok = read_fields(
        parser, simdjson::padded_string_view(line.text.data(), line.text.size(), line.capacity),
        fields);
    if (!ok && !util::is_valid_utf8(line.text)) {
      fields = {};
      simdjson::padded_string clean(util::sanitize_json_text(line.text));
      ok = read_fields(parser, clean, fields);
    }
    if (!ok) continue;
    head.is_transcript = head.is_transcript || fields.session_line;
    if (head.session_id.empty() && fields.session_id) head.session_id = *fields.session_id;
    if (head.cwd.empty() && fields.cwd) head.cwd = *fields.cwd;
    if (head.first_timestamp.empty() && fields.timestamp) head.first_timestamp = *fields.timestamp;
    if (head.is_transcript && !head.session_id.empty() && !head.cwd.empty() &&
        !head.first_timestamp.empty())
      break;
  }
  return head;
}

Error not_a_transcript(const std::filesystem::path& transcript, const TranscriptHead& head) {
  return Error{
      fmt::format("{} is not a Claude Code transcript (no session lines in its first {} lines)",
                  transcript.string(), head.lines_read),
      Error::Kind::Invalid};
}

}  // namespace ctxkit::claude
