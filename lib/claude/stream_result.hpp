#pragma once

#include <cstdint>
#include <memory>
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
  // Every API call of the client in this run, summed over `model_usage_since_last_result` (2.1.332:
  // this call's) or else `modelUsage` (which counts the compaction call and other models too, and
  // since 2.1.332 a resumed session's earlier calls); the result's `usage` when both are absent.
  // cost_usd likewise: that object's costUSD, else `total_cost_usd`.
  TokenUsage usage;
  bool compacted = false;  // a `system/compact_boundary` event was seen
};

// Reads a stream-json output line by line, by content: the order of an event's keys, the space
// between its tokens and keys it does not know do not matter. Only lines that name both "type" and
// "system" or "result" are parsed (in linear time); a line that is not JSON, or nests deeper than
// the parser's limit, is ignored.
class StreamResultReader {
 public:
  StreamResultReader();
  ~StreamResultReader();
  StreamResultReader(StreamResultReader&&) noexcept;
  StreamResultReader& operator=(StreamResultReader&&) noexcept;
  void feed_line(std::string_view line);
  // Feeds every line of `text`.
  void feed(std::string_view text);
  const StreamResult& result() const { return result_; }

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
  StreamResult result_;
};

StreamResult parse_stream_json(std::string_view text);

}  // namespace ctxkit
