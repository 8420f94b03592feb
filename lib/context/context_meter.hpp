#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "context/compaction_point.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::context {

// The newest context reading of a transcript.
struct ContextReading {
  int64_t tokens = 0;     // input + cache creation + cache read of the newest main-chain response
  std::string timestamp;  // the line's timestamp (ISO 8601), empty for a compaction estimate
  std::string model;
  bool after_compaction = false;  // taken from compactMetadata.postTokens (no response since)
  std::string client_version;     // the line's "version": the client release that wrote it
};

// What one scan of a transcript's tail found.
struct TailScan {
  std::optional<ContextReading> reading;
  bool found_tool_use = false;  // the wanted tool_use_id is on disk (or none was wanted)
  uint64_t file_size = 0;
  bool budget_exhausted = false;  // stopped at the byte budget without a reading
};

// The default byte budget of a tail scan.
inline constexpr uint64_t kDefaultScanBytes = 256ull << 20;

// Scans `transcript` from the end: the newest main-chain assistant reading (sidechains, API
// errors and "<synthetic>" responses skipped), reset by a later compact_boundary (its
// postTokens), and whether an assistant line carrying `want_tool_use_id` exists. Reads at most
// `max_bytes` from the end. A missing file is an error of kind NotFound.
// A subagent's own file (`Chain::Subagent`) marks every line as a sidechain; there those lines
// are the chain that counts.
enum class Chain { Main, Subagent };
[[nodiscard]] Result<TailScan> scan_transcript_tail(const std::filesystem::path& transcript,
                                                    const std::string& want_tool_use_id,
                                                    Chain chain = Chain::Main,
                                                    uint64_t max_bytes = kDefaultScanBytes);

// The newest compaction of a transcript (its compact_boundary line, read from the end within
// `max_bytes`): the tokens before and after it, or nullopt when none is found.
struct CompactionFigures {
  int64_t pre_tokens = 0;
  int64_t post_tokens = 0;
  std::string timestamp;
};
std::optional<CompactionFigures> last_compaction(const std::filesystem::path& transcript,
                                                 uint64_t max_bytes = 64ull << 20);

// Like scan_transcript_tail, but when `want_tool_use_id` is not on disk yet (the client writes the
// transcript after the hook starts), polls until it appears or `wait` passes, then returns the
// newest reading it has (a missing file counts as not there yet).
[[nodiscard]] Result<TailScan> measure_transcript(const std::filesystem::path& transcript,
                                                  const std::string& want_tool_use_id,
                                                  std::chrono::milliseconds wait,
                                                  Chain chain = Chain::Main);

// A context figure on the configured basis.
struct ContextFigure {
  int64_t tokens = 0;
  int64_t window = 0;       // the whole window
  int64_t usable = 0;       // where the client compacts (window - reserved_tokens when that is set)
  int64_t denominator = 0;  // usable or window, by basis
  int percent = 0;          // floor(tokens * 100 / denominator)
  core::Basis basis = core::Basis::Usable;
  bool auto_compact = true;  // false: the client's auto-compaction is off (usable is the window)
  CompactionPoint point;     // where and why the client compacts (reserved_tokens unset)
  // The client compacts at a threshold below the window (`N % until auto-compact`), else only
  // when the API refuses the prompt (`N % of window`).
  bool threshold() const { return point.threshold; }
};

// Facts about a session that decide its window size.
struct WindowHints {
  int64_t status_line_window = 0;  // context_window_size the status line reported, 0 if none
  bool seen_over_200k = false;     // some reading of the session exceeded 200,000 tokens
  std::string model;               // a model id; a "[1m]" suffix means a 1M window
  std::string client_version;      // the client release ("2.1.332"), empty when unknown
  CompactionSettings compaction;   // the client's settings that move or switch off compaction
};

// The window: the configured size if set; else the client's own figure (the status line's
// context_window_size) unless a reading exceeded it; else 1,000,000 if a reading exceeded 200,000;
// else the window the client's rules give the model (1,000,000 for a native-1M model or a [1m]
// id unless CLAUDE_CODE_DISABLE_1M_CONTEXT is set); else 200,000.
int64_t window_size(const core::ContextConfig& config, const WindowHints& hints, int64_t tokens);

// The most tokens a reading may count: no window is larger (context.window_tokens stops there).
// A larger usage is no reading: it is neither shown nor recorded, nor reminded of.
inline constexpr int64_t kMaxUsageTokens = 100'000'000;

// Turns a token count into a figure on the configured basis: usable ends where the client will
// compact (compaction_point), or reserved_tokens before the window end when that is configured.
ContextFigure make_figure(const core::ContextConfig& config, const WindowHints& hints,
                          int64_t tokens);

// The percentage a transcript's newest reading stands at (no waiting, no window hints beyond the
// reading itself), or nullopt when it has none: how full a session was when it ended.
// `compaction`: the client's settings, as read_compaction_settings finds them.
// `seen`: what the meter knows of the session beyond the transcript (the status line's window, a
// reading past 200k), so that the figure is the reminders' own.
std::optional<int> transcript_percent(const std::filesystem::path& transcript,
                                      const core::ContextConfig& config,
                                      const CompactionSettings& compaction = {},
                                      const WindowHints& seen = {});
// The same for a session named by its id (its transcript found as ctx-search finds sessions; the
// client's settings from `env` and the user's settings file);
// nullopt for an empty id, a session that cannot be found or a transcript without a reading.
std::optional<double> session_percent(const std::string& session, const util::Env& env,
                                      const core::Locations& loc,
                                      const core::ContextConfig& config);

// "127k", "1.2k", "850", "1M": a short token count for messages.
std::string short_tokens(int64_t tokens);

}  // namespace ctxkit::context
