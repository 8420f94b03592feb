#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "archive/indexer.hpp"
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
  std::string cwd;     // the session's working folder (from its transcript), "" when unknown
  std::string resume;  // cd <cwd> && claude --resume <session>
};

struct RecallAnswer {
  std::vector<RecallHit> hits;
  bool capped = false;  // more than store::SearchIndex::kMaxRanked messages matched
  std::string note;     // the index is being built, was rebuilt, ...: one sentence, or ""
};

// One message of a range shown around a line.
struct ShownMessage {
  int64_t line = 0;
  std::string kind, timestamp, text;
  uint64_t omitted_chars = 0;  // cut from the end of `text`
};

struct ShowAnswer {
  std::string session_id, agent, project, cwd, resume;
  std::vector<ShownMessage> messages;  // lines without message text (metadata) are left out
};

// A reference to a session or to one of its subagents: "SESSION" or "SESSION/agent-<id>".
struct SessionRef {
  std::string session_id, agent;
};
std::optional<SessionRef> parse_session_ref(const std::string& text);

// The archive's search for long-running readers (the MCP server): the index is opened once and
// kept; every answer leaves out the projects [archive] exclude_projects names, whatever the
// index holds. Before a search, what no indexer finished is indexed when no other indexer is at
// work (as ctx-search does); otherwise the answer says how far the index got.
class ArchiveRecall {
 public:
  ArchiveRecall(core::Locations loc, core::ArchiveConfig config)
      : loc_(std::move(loc)), config_(std::move(config)) {}

  Result<RecallAnswer> search(store::SearchQuery query);
  // The messages from `line - before` to `line + after` of a session (or subagent) transcript;
  // the message at `line` is cut after `max_chars` characters, the others after `context_chars`.
  Result<ShowAnswer> show(const SessionRef& ref, int64_t line, int before, int after,
                          size_t max_chars = 30000, size_t context_chars = 2000);

  // The resume command of a session whose working folder is `cwd` ("" when unknown).
  static std::string resume_command(const std::string& session_id, const std::string& cwd);

 private:
  Result<ArchiveIndex*> ready_index(std::string& note);
  std::string cwd_of(const std::filesystem::path& transcript, const std::string& agent);

  core::Locations loc_;
  core::ArchiveConfig config_;
  std::optional<ArchiveIndex> index_;
  std::map<std::string, std::string> cwds_;  // main transcript -> cwd
  std::optional<std::chrono::steady_clock::time_point>
      checked_;  // when pending work was last looked at
  std::string pending_note_;
};

}  // namespace ctxkit::archive
