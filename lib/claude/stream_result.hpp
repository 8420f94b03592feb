#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit {

// Tokens by kind, as the Messages API reports them.
struct TokenUsage {
  uint64_t input = 0, cache_creation = 0, cache_read = 0, output = 0;
  uint64_t total() const { return input + cache_creation + cache_read + output; }
  TokenUsage& operator+=(const TokenUsage& o) {
    input += o.input;
    cache_creation += o.cache_creation;
    cache_read += o.cache_read;
    output += o.output;
    return *this;
  }
  bool operator==(const TokenUsage&) const = default;
};

// What one `claude -p --output-format stream-json` call reported.
struct StreamResult {
  std::string session_id;  // from the `system/init` event, else from the result
  bool has_result = false; // a `result` event was seen
  bool is_error = false;   // the result says is_error, or its subtype is not "success"
  std::string subtype;     // "success", "error_max_turns", ...
  std::string text;        // the result's text (the final message)
  long num_turns = 0;
  double cost_usd = 0;
  // Every API call of the client in this run, summed over `modelUsage` (which counts the
  // compaction call and other models too); the result's `usage` when `modelUsage` is absent.
  TokenUsage usage;
  bool compacted = false;  // a `system/compact_boundary` event was seen
};

// Reads a stream-json output line by line. Only `system` and `result` events are parsed (the
// others, tool results included, are skipped by their first bytes); a line that is not JSON is
// ignored, as is anything nested deeper than a result needs.
class StreamResultReader {
 public:
  void feed_line(std::string_view line);
  // Feeds every line of `text`.
  void feed(std::string_view text);
  const StreamResult& result() const { return result_; }

 private:
  StreamResult result_;
};

StreamResult parse_stream_json(std::string_view text);

}  // namespace ctxkit
