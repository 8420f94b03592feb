#include "context/context_meter.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "claude/session_locator.hpp"
#include "claude/transcript_line.hpp"
#include "util/reverse_line_reader.hpp"
#include "util/saturate.hpp"

namespace ctxkit::context {
namespace fs = std::filesystem;

Result<TailScan> scan_transcript_tail(const fs::path& transcript, const std::string& want,
                                      Chain chain, uint64_t max_bytes) {
  auto reader = util::ReverseLineReader::open(transcript, max_bytes);
  if (!reader) return std::unexpected(reader.error());
  TailScan scan;
  scan.file_size = reader->size();
  scan.found_tool_use = want.empty();
  std::string reading_message_id;
  while (true) {
    auto line = reader->prev();
    if (!line) return std::unexpected(line.error());
    if (!*line) break;
    std::string_view text = (*line)->text;
    if (!claude::may_matter_for_meter(text)) continue;
    auto parsed = claude::parse_transcript_line(text);
    if (!parsed) continue;  // half-written or foreign line
    const claude::TranscriptLine& t = *parsed;
    if (t.is_compact_boundary()) {
      if (!scan.reading && t.compact_post_tokens) {
        scan.reading = ContextReading{*t.compact_post_tokens, t.timestamp, "", true, t.version};
      }
      break;  // everything before the boundary predates compaction
    }
    if (!t.is_reading(chain == Chain::Subagent)) continue;
    if (!scan.reading) {
      scan.reading =
          ContextReading{t.usage->context_tokens(), t.timestamp, t.model, false, t.version};
      reading_message_id = t.message_id;
    } else if (t.message_id != reading_message_id || t.message_id.empty()) {
      break;  // an older response: the wanted tool_use is not in the newest one
    }
    if (!want.empty() &&
        std::find(t.tool_use_ids.begin(), t.tool_use_ids.end(), want) != t.tool_use_ids.end())
      scan.found_tool_use = true;
    if (scan.found_tool_use) break;
  }
  scan.budget_exhausted = reader->budget_exhausted() && !scan.reading;
  return scan;
}

std::optional<CompactionFigures> last_compaction(const fs::path& transcript, uint64_t max_bytes) {
  auto reader = util::ReverseLineReader::open(transcript, max_bytes);
  if (!reader) return std::nullopt;
  while (true) {
    auto line = reader->prev();
    if (!line || !*line) return std::nullopt;
    std::string_view text = (*line)->text;
    if (text.find("\"compact_boundary\"") == std::string_view::npos) continue;
    auto parsed = claude::parse_transcript_line(text);
    if (!parsed || !parsed->is_compact_boundary()) continue;
    CompactionFigures f;
    f.pre_tokens = parsed->compact_pre_tokens.value_or(0);
    f.post_tokens = parsed->compact_post_tokens.value_or(0);
    f.timestamp = parsed->timestamp;
    return f;
  }
}

Result<TailScan> measure_transcript(const fs::path& transcript, const std::string& want,
                                    std::chrono::milliseconds wait, Chain chain) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + wait;
  std::chrono::milliseconds step(2);
  Result<TailScan> last = fail(fmt::format("reading {}: not scanned", transcript.string()));
  uint64_t last_size = UINT64_MAX;
  while (true) {
    struct stat st {};
    bool exists = ::stat(transcript.c_str(), &st) == 0;
    uint64_t size = exists ? static_cast<uint64_t>(st.st_size) : 0;
    if (exists && (size != last_size || !last)) {
      last = scan_transcript_tail(transcript, want, chain);
      last_size = size;
      if (last && last->found_tool_use) return last;
      if (!last && last.error().kind != Error::Kind::NotFound) return last;
    } else if (!exists) {
      last =
          fail(fmt::format("reading {}: no such file", transcript.string()), Error::Kind::NotFound);
    }
    auto now = clock::now();
    if (now >= deadline) return last;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    std::this_thread::sleep_for(std::max(std::min(step, left), std::chrono::milliseconds(1)));
    step = std::min(step * 2, std::chrono::milliseconds(16));
  }
}

int64_t window_size(const core::ContextConfig& config, const WindowHints& hints, int64_t tokens) {
  if (config.window_tokens > 0) return config.window_tokens;
  const bool over_200k = hints.seen_over_200k || tokens > 200'000;
  // The client's own figure, unless a reading proved the window larger (2.1.197 reported 200,000
  // on 1M sessions).
  if (hints.status_line_window > 0 && (hints.status_line_window > 200'000 || !over_200k))
    return hints.status_line_window;
  if (over_200k) return 1'000'000;
  if (int64_t w = model_window(hints.compaction, hints.model, hints.client_version); w > 0)
    return w;
  return 200'000;
}

ContextFigure make_figure(const core::ContextConfig& config, const WindowHints& hints,
                          int64_t tokens) {
  ContextFigure f;
  f.tokens = std::max<int64_t>(tokens, 0);
  f.window = window_size(config, hints, f.tokens);
  if (config.reserved_tokens > 0) {
    f.usable = std::max<int64_t>(f.window - config.reserved_tokens, 1);
  } else {
    f.point = compaction_point(hints.compaction, f.window, hints.model, hints.client_version);
    f.usable = std::max<int64_t>(f.point.tokens, 1);
    f.auto_compact = f.point.automatic;
  }
  f.basis = config.basis;
  f.denominator = config.basis == core::Basis::Usable ? f.usable : f.window;
  // floor(tokens * 100 / denominator) without overflow for a count near INT64_MAX (hostile input):
  // the remainder is below the denominator, so its product stays small.
  const int64_t whole = util::sat_mul(f.tokens / f.denominator, 100);
  const int64_t part = (f.tokens % f.denominator) * 100 / f.denominator;
  f.percent = static_cast<int>(
      std::min<int64_t>(util::sat_add(whole, part), std::numeric_limits<int>::max()));
  return f;
}

std::optional<double> session_percent(const std::string& session, const util::Env& env,
                                      const core::Locations& loc,
                                      const core::ContextConfig& config) {
  if (session.empty()) return std::nullopt;
  auto transcript = claude::locate_session(session, env, loc);
  if (!transcript) return std::nullopt;
  auto p = transcript_percent(*transcript, config, client_compaction_settings(env, {}));
  if (!p) return std::nullopt;
  return static_cast<double>(*p);
}

std::optional<int> transcript_percent(const fs::path& transcript, const core::ContextConfig& config,
                                      const CompactionSettings& compaction,
                                      const WindowHints& seen) {
  auto scan = scan_transcript_tail(transcript, "");
  if (!scan || !scan->reading) return std::nullopt;
  // A usage no window can hold is no reading, as on the status line and in the reminders.
  if (scan->reading->tokens > kMaxUsageTokens) return std::nullopt;
  WindowHints hints = seen;
  if (!scan->reading->model.empty() || hints.model.empty()) hints.model = scan->reading->model;
  if (!scan->reading->client_version.empty() || hints.client_version.empty())
    hints.client_version = scan->reading->client_version;
  hints.compaction = compaction;
  return make_figure(config, hints, scan->reading->tokens).percent;
}

std::string short_tokens(int64_t n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return fmt::format("{}M", n / 1'000'000);
  if (n >= 10'000) return fmt::format("{}k", n / 1000 + (n % 1000 >= 500 ? 1 : 0));
  if (n >= 1'000) return fmt::format("{:.1f}k", static_cast<double>(n) / 1000.0);
  return fmt::format("{}", n);
}

}  // namespace ctxkit::context
