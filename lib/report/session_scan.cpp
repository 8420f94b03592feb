#include "report/session_scan.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "claude/transcript_line.hpp"
#include "context/context_meter.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/line_reader.hpp"
#include "util/time.hpp"

namespace ctxkit::report {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// A JSON document of a line ctxkit did not write: depth checked first, then parsed; nullopt for
// anything that is not a JSON object.
std::optional<json> parse_object(std::string_view text) {
  if (util::json_depth(text, 64) > 64) return std::nullopt;
  json j = util::parse_json(text);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

int64_t count_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return std::max<int64_t>(it->get<int64_t>(), 0);
}

// The first line of a trimmed copy begins with {"trim_metadata":<a padded object>: its figures.
void read_trim_metadata(std::string_view line, const std::string& session, TranscriptScan& out) {
  constexpr std::string_view kHead = "{\"trim_metadata\":";
  if (!line.starts_with(kHead)) return;
  // The object is padded to a fixed width; read it alone, up to its closing brace at depth 0.
  std::string_view rest = line.substr(kHead.size());
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t end = std::string_view::npos;
  for (size_t i = 0; i < rest.size() && i < (1u << 20); ++i) {
    char c = rest[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      ++depth;
    else if (c == '}' || c == ']') {
      if (--depth == 0) {
        end = i + 1;
        break;
      }
    }
  }
  if (end == std::string_view::npos) return;
  auto m = parse_object(rest.substr(0, end));
  if (!m) return;
  Event e;
  e.kind = "trim";
  e.session = session;
  e.line = 1;
  e.at_ms = util::parse_iso8601_ms(m->value("trimmed_at", "")).value_or(0);
  const std::string parent = m->value("parent_session_id", "");
  int64_t saved = 0;
  if (auto s = m->find("stats"); s != m->end() && s->is_object())
    saved = count_of(*s, "tokens_saved");
  if (saved > 0) e.tokens_freed = saved;
  e.label = saved > 0 ? fmt::format("trim −{}", context::short_tokens(saved)) : "trim";
  e.detail = fmt::format("trimmed copy of {}{}", parent.empty() ? "an earlier session" : parent,
                         saved > 0 ? fmt::format(", about {} tokens freed", saved) : "");
  e.handover = true;
  out.events.push_back(std::move(e));
}

// The texts of a hook's additional context (a string or an array of strings).
std::vector<std::string> context_texts(const json& attachment) {
  std::vector<std::string> out;
  auto it = attachment.find("content");
  if (it == attachment.end()) return out;
  if (it->is_string()) out.push_back(it->get<std::string>());
  if (it->is_array())
    for (const auto& c : *it)
      if (c.is_string()) out.push_back(c.get<std::string>());
  return out;
}

const char* tier_name(int tier) {
  switch (tier) {
    case 1:
      return "warn";
    case 2:
      return "recommend";
    case 3:
      return "urgent";
    default:
      return "reminder";
  }
}

}  // namespace

std::optional<ReminderText> parse_reminder_text(std::string_view text) {
  constexpr std::string_view kHead = "Context at ";
  if (!text.starts_with(kHead)) return std::nullopt;
  std::string_view rest = text.substr(kHead.size());
  int percent = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), percent);
  if (ec != std::errc() || ptr == rest.data() || ptr == rest.data() + rest.size() || *ptr != '%')
    return std::nullopt;
  ReminderText r;
  r.percent = percent;
  // The words of each tier (context::reminder_text), the main session's and a subagent's.
  if (contains(text, "Close to the limit") || contains(text, "Finish now and return"))
    r.tier = 3;
  else if (contains(text, "/trim is recommended now") || contains(text, "Plan to finish the task"))
    r.tier = 2;
  else if (contains(text, "Response quality can start to degrade") ||
           contains(text, "Keep further tool output small"))
    r.tier = 1;
  return r;
}

Result<TranscriptScan> scan_transcript(const fs::path& transcript, const std::string& session,
                                       bool subagent) {
  auto reader = util::LineReader::open_read_ahead(transcript);
  if (!reader) return std::unexpected(reader.error());
  TranscriptScan out;
  out.session_id = session;
  std::string last_message_id;
  while (true) {
    auto next = reader->next();
    if (!next) return std::unexpected(next.error());
    if (!*next) break;
    const auto& line = **next;
    out.lines = line.number;
    const std::string_view text = line.text;
    if (line.number == 1) read_trim_metadata(text, session, out);
    const bool reminder = contains(text, "\"hook_additional_context\"");
    if (!reminder && !claude::may_matter_for_meter(text)) continue;
    if (reminder) {
      auto j = parse_object(text);
      if (!j) continue;
      auto a = j->find("attachment");
      if (a == j->end() || !a->is_object() || a->value("type", "") != "hook_additional_context")
        continue;
      for (const auto& t : context_texts(*a)) {
        auto r = parse_reminder_text(t);
        if (!r) continue;
        Event e;
        e.kind = "reminder";
        e.session = session;
        e.line = line.number;
        e.at_ms = util::parse_iso8601_ms(j->value("timestamp", "")).value_or(0);
        e.tier = r->tier;
        e.label = fmt::format("R{} {}%", r->tier, r->percent);
        e.detail = fmt::format("{} reminder at {}%{}", tier_name(r->tier), r->percent,
                               subagent ? " (in the subagent)" : "");
        out.events.push_back(std::move(e));
        break;
      }
      continue;
    }
    auto parsed = claude::parse_transcript_line(text);
    if (!parsed) continue;
    const auto& l = *parsed;
    const int64_t at = util::parse_iso8601_ms(l.timestamp).value_or(0);
    if (at) {
      if (!out.start_ms || at < out.start_ms) out.start_ms = at;
      out.end_ms = std::max(out.end_ms, at);
    }
    if (l.is_compact_boundary()) {
      Event e;
      e.kind = "compaction";
      e.session = session;
      e.line = line.number;
      e.at_ms = at;
      e.tokens_before = l.compact_pre_tokens;
      e.tokens_after = l.compact_post_tokens;
      e.label = fmt::format(
          "compact {}→{}", context::short_tokens(l.compact_pre_tokens.value_or(0)),
          l.compact_post_tokens ? context::short_tokens(*l.compact_post_tokens) : std::string("?"));
      e.detail = fmt::format(
          "compaction: {} tokens before, {} after", l.compact_pre_tokens.value_or(0),
          l.compact_post_tokens ? fmt::format("{}", *l.compact_post_tokens) : std::string("?"));
      out.events.push_back(std::move(e));
      if (l.compact_post_tokens && *l.compact_post_tokens <= context::kMaxUsageTokens)
        out.points.push_back({at, *l.compact_post_tokens, line.number});
      last_message_id.clear();
      continue;
    }
    if (!l.is_reading(subagent)) continue;
    if (!l.message_id.empty() && l.message_id == last_message_id) continue;
    last_message_id = l.message_id;
    const int64_t tokens = l.usage->context_tokens();
    if (tokens > context::kMaxUsageTokens) continue;
    out.points.push_back({at, tokens, line.number});
    out.max_tokens = std::max(out.max_tokens, tokens);
    if (!l.model.empty()) out.model = l.model;
    if (!l.version.empty()) out.client_version = l.version;
  }
  return out;
}

std::vector<fs::path> subagent_transcripts(const fs::path& transcript) {
  std::vector<fs::path> out;
  fs::path dir = transcript.parent_path() / transcript.stem() / "subagents";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("agent-") && name.ends_with(".jsonl") && it->is_regular_file(ec))
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

SessionPart make_session_part(TranscriptScan scan, const fs::path& transcript,
                              const core::ContextConfig& config,
                              const context::CompactionSettings& settings) {
  SessionPart s;
  s.session_id = scan.session_id;
  s.transcript = transcript.string();
  s.model = scan.model;
  s.client_version = scan.client_version;
  s.cwd = scan.cwd;
  s.lines = scan.lines;
  s.start_ms = scan.start_ms;
  s.end_ms = scan.end_ms;
  context::WindowHints hints;
  hints.model = scan.model;
  hints.client_version = scan.client_version;
  hints.compaction = settings;
  hints.seen_over_200k = scan.max_tokens > 200'000;
  const context::ContextFigure f = context::make_figure(config, hints, scan.max_tokens);
  s.window = f.window;
  s.denominator = f.denominator;
  s.basis = f.basis == core::Basis::Usable ? "usable" : "window";
  s.point_tokens = f.point.automatic ? f.point.tokens : 0;
  s.point_words = context::describe_point(f.point);
  s.points = std::move(scan.points);
  if (s.lines == 0)
    s.missing.push_back(fmt::format("the transcript {} is empty", transcript.string()));
  else if (s.points.empty())
    s.missing.push_back(
        fmt::format("the transcript {} has no usage figure (no main-chain response with usage)",
                    transcript.string()));
  return s;
}

}  // namespace ctxkit::report
