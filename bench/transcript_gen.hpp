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

// Writes a transcript shaped like a real session's, of about `target_bytes`: queue operations and
// user prompts, one content block per assistant line (lines of a response share message.id and
// usage), tool results as strings or block arrays with toolUseResult (which repeats the output),
// tool-result bodies log-normal around a 2 KiB median with 1.5% between 50 and 256 KiB, a base64
// image result of 30-400 KiB about every 17 MB, progress and hook lines between, and one automatic
// compaction in the middle. Text is drawn from a Zipf vocabulary of a few thousand words. The last
// response is a tool call at `final_percent` of the usable 200k window. Deterministic for a given
// seed.
GeneratedTranscript generate_transcript(const std::filesystem::path& path, uint64_t target_bytes,
                                        int final_percent = 78, uint32_t seed = 42);

}  // namespace ctxkit::bench
