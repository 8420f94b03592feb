#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "archive/indexer.hpp"
#include "archive/output_archive.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/search_index.hpp"
#include "util/error.hpp"

namespace ctxkit::archive {

// A hit as the archive's tools answer it: where it is (cited SESSION:LINE, or
// SESSION/agent-<id>:LINE for a subagent's transcript) and how to resume its session.
struct RecallHit {
  std::string cite;        // what archive_show / ctx-search --show open
  std::string session_id;  // the session (a subagent's parent)
  std::string agent;       // "agent-<id>" when the hit is in a subagent's transcript, else ""
  int64_t line = 0;
  std::string timestamp, kind, project, snippet;
  double rank = 0;     // bm25, lower is better (0 when the hits come newest first, unranked)
  std::string cwd;     // the session's working folder (from its transcript), "" when unknown
  std::string resume;  // cd <cwd> && claude --resume <session>; "" when not asked for
};

struct RecallAnswer {
  std::vector<RecallHit> hits;
  bool capped = false;  // more than store::SearchIndex::kMaxRanked messages matched
};

// One message of a range shown around a line.
struct ShownMessage {
  int64_t line = 0;
  std::string role;  // user, assistant, tool_use, tool_result; "" for a line without message text
  std::string timestamp, text;
  uint64_t omitted_chars = 0;  // cut from the end of `text`
};

struct ShowAnswer {
  std::string session_id, agent, project, cwd, resume;
  std::vector<ShownMessage> messages;  // lines without message text (metadata) are left out
};

// What an answer found of the archive and its index, for the caller to tell the user.
struct IndexStatus {
  bool archived = false;  // the archive folder exists (else nothing is archived yet)
  // The index was corrupt and rebuilt, an archived transcript could not be indexed: one
  // sentence, or "".
  std::string note;
  bool caught_up = false;  // this process indexed what was pending (no other indexer was at work)
  IndexProgress progress;  // how far the index is, after that
};

// A reference to a session or to one of its subagents: "SESSION" or "SESSION/agent-<id>".
struct SessionRef {
  std::string session_id, agent;
};
std::optional<SessionRef> parse_session_ref(const std::string& text);

// The archive's search, the one use case behind archive_search / archive_show (the MCP server,
// long-running) and ctx-search (one answer). The index is opened once and kept; every answer
// leaves out the projects [archive] exclude_projects names, whatever the index holds. Before an
// answer, what no indexer finished is indexed when no other indexer is at work; otherwise
// index_status() says how far the index got. Pending work is looked at once a second at most:
// the hooks' indexer keeps the index up to date, and listing the archive costs more than a query.
class ArchiveRecall {
 public:
  // `before_catch_up`, when given, is called with how far the index is just before this process
  // indexes what is pending (a long catch-up is worth a word to the user first).
  ArchiveRecall(core::Locations loc, core::ArchiveConfig config,
                std::function<void(const IndexProgress&)> before_catch_up = {})
      : loc_(std::move(loc)),
        config_(std::move(config)),
        before_catch_up_(std::move(before_catch_up)) {}

  // The hits for `query` (a project given as a path is turned into the client's folder name),
  // best first, at most query.limit. Nothing archived yet is no error: no hits, and
  // index_status().archived is false. With `resume` false the hits carry no cwd nor resume
  // command (reading each session's head is left out).
  [[nodiscard]] Result<RecallAnswer> search(store::SearchQuery query, bool resume = true);
  // The messages from `line - before` to `line + after` of a session (or subagent) transcript;
  // the message at `line` is cut after `max_chars` bytes, the others after `context_chars`.
  // Errors: nothing archived yet, a session not in the searchable archive (of an excluded
  // project, or one that carries the exclusion marker), a line it lacks.
  [[nodiscard]] Result<ShowAnswer> show(const SessionRef& ref, int64_t line, int before, int after,
                                        size_t max_chars = 30000, size_t context_chars = 2000);
  // A part of an output the live cap archived (ctx-cap): `range` of the output under `handle`, or
  // with `search` the lines of it that hold the words (archive/output_archive's read_output).
  // An output of a project [archive] exclude_projects names is refused like its sessions.
  [[nodiscard]] Result<OutputSlice> show_output(const std::string& handle, const OutputRange& range,
                                                const std::string& search = {},
                                                size_t max_bytes = 20000);
  // What the last search or show found of the archive and its index (also when it failed after
  // looking). Within a second of a look, the last look's figures, without its note.
  const IndexStatus& index_status() const { return status_; }

  // The resume command of a session whose working folder is `cwd` ("" when unknown).
  static std::string resume_command(const std::string& session_id, const std::string& cwd);

 private:
  [[nodiscard]] Result<ArchiveIndex*> ready_index();
  std::string cwd_of(const std::filesystem::path& transcript, const std::string& agent);
  // Whether the session whose own archived transcript is `main` carries the exclusion marker
  // (in that transcript or a subagent's): what the index excluded, or the marker in what it has
  // not read yet. Such a session is left out whole, as the search leaves it out.
  [[nodiscard]] Result<bool> carries_marker(const std::string& session_id,
                                            const std::filesystem::path& main);

  core::Locations loc_;
  core::ArchiveConfig config_;
  std::function<void(const IndexProgress&)> before_catch_up_;
  std::optional<ArchiveIndex> index_;
  std::map<std::string, std::string> cwds_;  // main transcript -> cwd
  std::optional<std::chrono::steady_clock::time_point>
      checked_;         // when pending work was last looked at
  IndexStatus status_;  // of this answer
  IndexStatus last_;    // of the last look at pending work
};

}  // namespace ctxkit::archive
