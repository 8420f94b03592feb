#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::claude {

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

// What a client has reported for one session: its modelUsage summed, and total_cost_usd.
struct SessionTotals {
  TokenUsage usage;
  double cost_usd = 0;
};

// A `rate_limit_event` of the stream (a subscription's unified limits, as the client read them from
// the API's anthropic-ratelimit-unified-* headers).
struct RateLimitEvent {
  std::string status;                // "allowed", "allowed_warning", "rejected"
  std::string type;                  // rateLimitType: "five_hour", "seven_day", ...
  std::optional<int64_t> resets_at;  // resetsAt: seconds since the epoch, as given
};

// What one `claude -p --output-format stream-json` call reported.
struct StreamResult {
  std::string session_id;   // from the `system/init` event, else from the result
  bool has_result = false;  // a `result` event was seen
  bool is_error = false;    // the result says is_error, or its subtype is not "success"
  std::string subtype;      // "success", "error_max_turns", ...
  std::string text;         // the result's text (the final message)
  long num_turns = 0;
  // This call's tokens and cost: `model_usage_since_last_result` (newer releases: the call's own,
  // with costs) when given, else `modelUsage` (which counts the compaction call and other models
  // too, and from 2.1.277 a resumed session's earlier calls: see take_call_share) and
  // `total_cost_usd`; the result's `usage` when neither is there.
  TokenUsage usage;
  double cost_usd = 0;
  SessionTotals reported;      // modelUsage summed (else usage) and total_cost_usd, as reported
  bool share_given = false;    // the client gave this call's own share
  bool compacted = false;      // a `system/compact_boundary` event was seen
  std::string client_version;  // the `system/init` event's claude_code_version
  std::string model;           // the `system/init` event's model: the id the client resolved
  // The session's context after the call, as the meter counts it: input, cache creation and cache
  // read of the last assistant message's usage (else of the result's usage); 0 when unknown.
  uint64_t last_context = 0;
  uint64_t context_window = 0;  // the largest `contextWindow` of the result's modelUsage; 0: none
  // When the call ended on an answer of the API that was not a message (a limit, an overload, a
  // refusal): the result's api_error_status (the HTTP status), and from 2.1.332 on its
  // api_error_type ("rate_limit_error", "overloaded_error", ...) and api_error
  // ("usage_limit_reached", ...).
  std::optional<int> api_error_status;
  std::string api_error_type, api_error;
  int api_retries = 0;  // `system/api_retry` events: the client's own retries of a refused request
  std::optional<RateLimitEvent> rate_limit;  // the last `rate_limit_event`
};

// Whether a client of this version reports the whole session in a result's modelUsage and
// total_cost_usd (a resumed call then includes every earlier call of the session), as Claude Code
// does from kSessionTotalsSince on; earlier releases report the call alone. An unknown version
// counts as the older behaviour.
bool reports_session_totals(std::string_view client_version);
extern const char* const kSessionTotalsSince;

// Turns `result` into this call's share. When its client reports session totals, subtracts
// `before` (what the previous result of the same session reported; nothing for a new session)
// from its usage and cost. Returns what the session has reported so far, for the next call.
SessionTotals take_call_share(StreamResult& result, const std::optional<SessionTotals>& before);

// Reads a stream-json output line by line, by content: the order of an event's keys, the space
// between its tokens and keys it does not know do not matter. Only lines that name both "type" and
// "system", "result", "assistant" or "rate_limit_event" are parsed (in linear time); a line that is
// not JSON, or nests deeper than the parser's limit, is ignored.
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

}  // namespace ctxkit::claude
