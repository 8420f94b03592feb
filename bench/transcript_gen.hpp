#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ctxkit::bench {

// What a generated transcript ends with, so that a payload can point at its last tool call.
struct GeneratedTranscript {
  std::string session_id;
  std::string last_tool_use_id;
  int64_t last_context_tokens = 0;
  uint64_t bytes = 0;
  std::vector<std::string> rare_tokens;  // identifiers that occur once (for selective searches)
};

// Writes a transcript shaped like the client's (queue operations, user prompts, attachments,
// one assistant line per content block sharing message.id and usage, tool results as strings or
// block arrays with toolUseResult, progress records, compaction boundaries when usage reaches
// the auto-compaction point) of about `target_bytes`. Tool outputs vary in size, a few large.
// The last response is a tool call at `final_percent` of the usable 200k window. Deterministic
// for a given seed.
GeneratedTranscript generate_transcript(const std::filesystem::path& path, uint64_t target_bytes,
                                        int final_percent = 78, uint32_t seed = 42);

}  // namespace ctxkit::bench
