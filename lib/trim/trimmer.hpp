#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ctxkit::trim {

// What to trim.
struct TrimOptions {
  size_t threshold = 500;       // characters kept of a long tool result or input string
  std::set<std::string> tools;  // target tools
  std::string new_session_id;   // replaces every line's sessionId; empty: kept (dry run)
  std::string notice_file;      // the file the notices point at (same line numbers)
  std::unordered_set<std::string>
      protected_tool_use_ids;  // results/inputs left untouched (--keep-recent)
};

// Per-tool figures: every result seen, and what trimming them saves.
struct ToolTrimStats {
  uint64_t results = 0;         // tool results of this tool
  uint64_t result_chars = 0;    // their characters
  uint64_t trimmed = 0;         // results trimmed
  uint64_t chars_saved = 0;     // characters saved on this tool's results and inputs
  uint64_t inputs_trimmed = 0;  // tool_use input strings shortened
};

// Totals of a trim.
struct TrimStats {
  TrimStats& operator+=(const TrimStats& other);
  std::map<std::string, ToolTrimStats> per_tool;
  uint64_t results_trimmed = 0;
  uint64_t inputs_trimmed = 0;
  uint64_t images_replaced = 0;
  uint64_t results_images_only =
      0;  // of results_trimmed: only images replaced (no text cut, no notice)
  uint64_t chars_saved = 0;
  uint64_t lines = 0;
  uint64_t lines_changed = 0;
  uint64_t lines_unparsed = 0;  // passed through unchanged (not JSON, not UTF-8)
  uint64_t usage_zeroed = 0;
  uint64_t error_markers = 0;
  // The convention of claude-code-tools: four characters a token.
  uint64_t tokens_saved() const { return chars_saved / 4; }
};

// Rewrites transcript lines. Feed every line in order: a tool_use must be seen before its result
// to know the tool's name. Each line is edited in place: only the sessionId value, the trimmed
// contents, usage numbers and error markers change; every other byte is copied as it was.
class Trimmer {
 public:
  explicit Trimmer(TrimOptions options);
  ~Trimmer();
  Trimmer(const Trimmer&) = delete;
  Trimmer& operator=(const Trimmer&) = delete;

  // Processes one line (without its '\n'). `capacity` bytes are readable from line.data()
  // (at least line.size() + 64). Appends the line's new text to `out` (when given) and returns
  // whether it changed. Lines that are not JSON objects or not UTF-8 are kept unchanged.
  bool process(std::string_view line, size_t capacity, uint64_t line_number, std::string* out);

  // Only records tool names and response ids (the first pass of --keep-recent).
  void prescan(std::string_view line, size_t capacity);

  // The tool_use ids of the last `n` main-chain assistant responses seen by prescan().
  std::unordered_set<std::string> tool_use_ids_of_last_responses(size_t n) const;
  // Every tool name seen in a tool_use block.
  std::set<std::string> tool_names_seen() const;

  const TrimStats& stats() const { return stats_; }

  // A dry run split in two parts at a line boundary, each fed on its own thread (figures only):
  // - `first` is fed the lines before the boundary, `second` the rest, after start_mid_file(),
  //   numbered from 1 (the first part's line count is not known yet);
  // - `second` puts aside each line whose tool results name a tool_use it has not seen (it
  //   stood in the first part), or that a cut makes depend on its line number's digits:
  //   last_line_deferred() says so, and the caller keeps where it is;
  // - once both are done, `rest` takes over `first` (continue_after), and is fed the lines put
  //   aside, in order and with their numbers in the file, each after recall_names(second, i)
  //   for the i-th;
  // - join() then gives the figures one Trimmer fed every line in order would have.
  void start_mid_file();
  bool last_line_deferred() const;
  void continue_after(Trimmer& first);
  void recall_names(const Trimmer& second, size_t deferred_index);
  static TrimStats join(const Trimmer& first, const Trimmer& second, const Trimmer& rest);
  // The notice appended to a cut string (exact format of claude-code-tools).
  static std::string notice(uint64_t original_chars, uint64_t kept_chars, uint64_t line,
                            const std::string& file);
  // The marker that identifies content trimmed before (left alone by a second trim).
  static constexpr std::string_view kNoticeMarker = "[...truncated - original content was ";

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TrimStats stats_;
};

}  // namespace ctxkit::trim
