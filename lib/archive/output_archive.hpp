#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/locations.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace ctxkit::archive {

// The handle a capped output is archived and fetched by: the tool_use_id itself when it is 1 to
// 100 of [A-Za-z0-9_-] (what the client makes), else "h-" and 16 hex digits of a hash of it, so
// that an id with path characters never names a path outside the folder.
std::string output_handle(std::string_view tool_use_id);
// Whether `text` can be a handle (the characters above, 1 to 100 of them).
bool valid_output_handle(std::string_view text);

// The folder of capped outputs: <archive>/tool-outputs (0700), one <handle>.txt (the whole
// output, 0600) and <handle>.json (what it was) per output.
std::filesystem::path outputs_dir(const core::Locations& loc);

// What an archived output was.
struct OutputMeta {
  std::string handle, tool_use_id, session_id, tool_name, project, cwd;
  int64_t at_ms = 0;
  uint64_t bytes = 0, lines = 0, chars = 0;
};

// An output being archived: written under a temporary name and made visible, with its
// description, only by commit(); a writer dropped before commits nothing.
class OutputWriter {
 public:
  // Creates the folder (private, never through a link) and the temporary file. Errors: the
  // folder or the file cannot be made (read-only, not ours, a link in the way, no space).
  [[nodiscard]] static Result<OutputWriter> create(const core::Locations& loc,
                                                   const std::string& handle);
  void write(std::string_view data) { file_.write(data); }
  // Flushes and renames the output, then writes its description; any write error (a full disk,
  // a file-size limit) is the error and leaves nothing under the handle's names.
  [[nodiscard]] Result<void> commit(const OutputMeta& meta);

 private:
  OutputWriter(std::filesystem::path dir, std::string handle, util::AtomicFile file)
      : dir_(std::move(dir)), handle_(std::move(handle)), file_(std::move(file)) {}
  std::filesystem::path dir_;
  std::string handle_;
  util::AtomicFile file_;
};

// Records a capped output of `session_id`: `tokens` kept out of its context, and the cap's event
// (`event`, a JSON object: tool, handle, at_ms, sizes), as one line "<tokens>\t<event>" appended
// to <tool-outputs>/sessions/<session handle>.tokens (0600). The cap writes nothing else: no
// database is opened on its path (a WAL's first write and its checkpoint sync the disk).
[[nodiscard]] Result<void> record_capped_output(const core::Locations& loc,
                                                const std::string& session_id, uint64_t tokens,
                                                const std::string& event);
// What the cap kept out of a session's context so far, in tokens (0 when nothing, or unreadable).
uint64_t capped_tokens(const core::Locations& loc, const std::string& session_id);
// The events of a session's capped outputs, oldest first (lines without one, written by an
// earlier version as a bare number, give none).
struct CappedOutputEvent {
  int64_t at_ms = 0;
  std::string data;  // the JSON object
};
std::vector<CappedOutputEvent> capped_output_events(const core::Locations& loc,
                                                    const std::string& session_id);

// A part of an archived output: lines (1-based, both ends included) or bytes (from offset `from`,
// 0-based, to `to`, excluded). `to` 0: to the end.
struct OutputRange {
  bool bytes = false;
  uint64_t from = 1, to = 0;
};
// "A:B", "A:" or ":B" (A, B decimal). Errors (kind Invalid) name the text.
[[nodiscard]] Result<OutputRange> parse_output_range(std::string_view text, bool bytes);

// What a look at an archived output found.
struct OutputSlice {
  OutputMeta meta;
  std::string text;  // the range asked for (lines from first_line), cut at `max_bytes`
  uint64_t first_line = 0, last_line = 0;  // of `text`, when lines were asked for
  uint64_t from_byte = 0, to_byte = 0;     // of `text` in the output
  bool cut = false;                        // the range went on past max_bytes
  struct Match {
    uint64_t line = 0;
    std::string text;  // the line, cut at 300 bytes
  };
  std::vector<Match> matches;  // with a search: the lines of the range holding it
  bool more_matches = false;   // more than kMaxOutputMatches lines matched
};
inline constexpr size_t kMaxOutputMatches = 50;

// Reads `range` of the output archived under `handle`: its text (at most `max_bytes`, whole lines
// when lines were asked for, never a cut UTF-8 sequence), or with `search` (words, matched as one
// string without regard to ASCII case) the lines of the range that hold it. Errors: an invalid
// handle, an output not archived (kind NotFound), a range past the output's end.
[[nodiscard]] Result<OutputSlice> read_output(const core::Locations& loc, const std::string& handle,
                                              const OutputRange& range,
                                              const std::string& search = {},
                                              size_t max_bytes = 20000);

}  // namespace ctxkit::archive
