#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/saturate.hpp"

namespace ctxkit::claude {

// Token counts of one API response, as repeated on each of its transcript lines.
struct Usage {
  int64_t input_tokens = 0;
  int64_t cache_creation_input_tokens = 0;
  int64_t cache_read_input_tokens = 0;
  // The context the request used: input + cache creation + cache read (held at INT64_MAX).
  int64_t context_tokens() const {
    return util::sat_add(util::sat_add(input_tokens, cache_creation_input_tokens),
                         cache_read_input_tokens);
  }
};

// What the context meter needs from one transcript line.
struct TranscriptLine {
  std::string type;
  std::string subtype;
  std::string timestamp;
  std::string model;       // message.model
  std::string version;     // the client release that wrote the line
  std::string message_id;  // message.id
  bool is_sidechain = false;
  bool is_api_error = false;
  std::optional<Usage> usage;
  std::optional<int64_t> compact_post_tokens;  // compactMetadata.postTokens
  std::optional<int64_t> compact_pre_tokens;   // compactMetadata.preTokens
  std::vector<std::string> tool_use_ids;       // ids of tool_use blocks in message.content

  // An assistant line whose usage counts as a context reading: not an API error, not a
  // "<synthetic>" response, and on the main chain unless `sidechain_ok` (a subagent's own file).
  bool is_reading(bool sidechain_ok = false) const {
    return type == "assistant" && (sidechain_ok || !is_sidechain) && !is_api_error &&
           model != "<synthetic>" && usage.has_value();
  }
  bool is_compact_boundary() const { return type == "system" && subtype == "compact_boundary"; }
};

// True when a line may be an assistant line or a compaction boundary. Cheap (a substring search,
// no parse): the raw text `"assistant"` or `"compact_boundary"` can only occur in a JSON line as a
// structural token, never inside an escaped string, so lines without it are skipped safely.
bool may_matter_for_meter(std::string_view line);

// Extracts the meter's fields from one JSONL line without building large values (text, tool
// inputs and outputs are dropped as they are read). Ill-formed UTF-8 is tolerated. A line that
// is not a JSON object is an error.
[[nodiscard]] Result<TranscriptLine> parse_transcript_line(std::string_view line);

}  // namespace ctxkit::claude
