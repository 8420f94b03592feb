#include "claude/stream_result.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ctxkit::claude {
namespace {
namespace od = simdjson::ondemand;

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// The events a runner needs name a "type" of "system", "result", "assistant" (its usage: the
// context) or "rate_limit_event"; a line without both words cannot be one, whatever the order of
// its keys or the space between its tokens, and is not parsed at all (tool results, in "user"
// lines, are most of the bytes).
bool may_be_wanted(std::string_view line) {
  return contains(line, "\"type\"") &&
         (contains(line, "\"result\"") || contains(line, "\"system\"") ||
          contains(line, "\"assistant\"") || contains(line, "\"rate_limit_event\""));
}

// A non-negative count: negative and non-numeric values count as 0.
uint64_t count(od::value v) {
  od::number n;
  if (v.get_number().get(n)) return 0;
  if (n.is_uint64()) return n.get_uint64();
  if (n.is_int64()) return n.get_int64() > 0 ? static_cast<uint64_t>(n.get_int64()) : 0;
  const double d = n.get_double();
  return d > 0 && d < 1.8e19 ? static_cast<uint64_t>(d) : 0;
}

// An integer within +-2^53 (a JSON number, integral or not, truncated); nothing else.
std::optional<int64_t> integer(od::value v) {
  od::number n;
  if (v.get_number().get(n)) return std::nullopt;
  constexpr int64_t kMax = int64_t{1} << 53;
  if (n.is_int64()) {
    const int64_t i = n.get_int64();
    return i >= -kMax && i <= kMax ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (n.is_uint64())
    return n.get_uint64() <= static_cast<uint64_t>(kMax)
               ? std::optional<int64_t>(static_cast<int64_t>(n.get_uint64()))
               : std::nullopt;
  const double d = n.get_double();
  return d >= -static_cast<double>(kMax) && d <= static_cast<double>(kMax)
             ? std::optional<int64_t>(static_cast<int64_t>(d))
             : std::nullopt;
}

bool text(od::value v, std::string& out) {
  std::string_view s;
  if (v.get_string().get(s)) return false;
  out.assign(s);
  return true;
}

// Token counts of an API `usage` object (snake_case) or a `modelUsage` entry (camelCase), and
// the entry's `costUSD` added to `cost` when given.
bool read_usage(od::value v, TokenUsage& u, double* cost = nullptr, uint64_t* window = nullptr) {
  od::object obj;
  if (v.get_object().get(obj)) return false;
  for (auto fr : obj) {
    od::field f;
    if (std::move(fr).get(f)) return false;
    std::string_view key;
    if (f.unescaped_key().get(key)) return false;
    if (key == "input_tokens" || key == "inputTokens")
      u.input = count(f.value());
    else if (key == "cache_creation_input_tokens" || key == "cacheCreationInputTokens")
      u.cache_creation = count(f.value());
    else if (key == "cache_read_input_tokens" || key == "cacheReadInputTokens")
      u.cache_read = count(f.value());
    else if (key == "output_tokens" || key == "outputTokens")
      u.output = count(f.value());
    else if (window && key == "contextWindow")
      *window = std::max(*window, count(f.value()));
    else if (cost && key == "costUSD") {
      double d = 0;
      if (!f.value().get_double().get(d) && d >= 0) *cost += d;
    }
  }
  return true;
}

// The sum over the models of a `modelUsage`-shaped object ({"<model>": {"inputTokens": …}}), and
// of their costs; false when it is not such an object.
bool read_model_usage(od::value v, TokenUsage& sum, double& cost, uint64_t* window = nullptr) {
  od::object models;
  if (v.get_object().get(models)) return false;
  bool any = false;
  for (auto mr : models) {
    od::field m;
    if (std::move(mr).get(m)) return false;
    TokenUsage one;
    if (read_usage(m.value(), one, &cost, window)) sum += one, any = true;
  }
  return any;
}

// A `rate_limit_info` object, whatever the order of its keys.
bool read_rate_limit(od::value v, RateLimitEvent& out) {
  od::object obj;
  if (v.get_object().get(obj)) return false;
  for (auto fr : obj) {
    od::field f;
    if (std::move(fr).get(f)) return false;
    std::string_view key;
    if (f.unescaped_key().get(key)) return false;
    if (key == "status")
      text(f.value(), out.status);
    else if (key == "rateLimitType")
      text(f.value(), out.type);
    else if (key == "resetsAt")
      out.resets_at = integer(f.value());
  }
  return true;
}

// Everything a runner reads from one event, whatever the order of its keys.
struct Event {
  std::string type, subtype, session_id, result, version, model, api_error_type, api_error;
  std::optional<int64_t> api_error_status;
  std::optional<RateLimitEvent> rate_limit;
  bool is_error = false;
  long num_turns = 0;
  double cost_usd = 0;
  bool has_cost = false;
  TokenUsage usage, model_usage, call_usage, message_usage;
  double call_cost = 0;
  uint64_t context_window = 0;  // the largest contextWindow of modelUsage
  bool has_usage = false, has_model_usage = false, has_call_usage = false,
       has_message_usage = false;
  bool subagent = false;  // an assistant event of a subagent (parent_tool_use_id set)
};

// The `usage` of an assistant event's `message`.
bool read_message_usage(od::value v, TokenUsage& u) {
  od::object obj;
  if (v.get_object().get(obj)) return false;
  for (auto fr : obj) {
    od::field f;
    if (std::move(fr).get(f)) return false;
    std::string_view key;
    if (f.unescaped_key().get(key)) return false;
    if (key == "usage") return read_usage(f.value(), u);
  }
  return false;
}

bool read_event(od::object obj, Event& ev) {
  for (auto fr : obj) {
    od::field f;
    if (std::move(fr).get(f)) return false;
    std::string_view key;
    if (f.unescaped_key().get(key)) return false;
    od::value v = f.value();
    if (key == "type")
      text(v, ev.type);
    else if (key == "subtype")
      text(v, ev.subtype);
    else if (key == "session_id")
      text(v, ev.session_id);
    else if (key == "result")
      text(v, ev.result);
    else if (key == "claude_code_version")
      text(v, ev.version);
    else if (key == "model")
      text(v, ev.model);
    else if (key == "api_error_status")
      ev.api_error_status = integer(v);
    else if (key == "api_error_type")
      text(v, ev.api_error_type);
    else if (key == "api_error")
      text(v, ev.api_error);
    else if (key == "rate_limit_info") {
      RateLimitEvent info;
      if (read_rate_limit(v, info)) ev.rate_limit = std::move(info);
    } else if (key == "is_error") {
      bool b = false;
      if (!v.get_bool().get(b)) ev.is_error = b;
    } else if (key == "num_turns")
      ev.num_turns = static_cast<long>(std::min<uint64_t>(count(v), 1u << 30));
    else if (key == "total_cost_usd") {
      double d = 0;
      if (!v.get_double().get(d) && d >= 0) ev.cost_usd = d, ev.has_cost = true;
    } else if (key == "usage") {
      ev.has_usage = read_usage(v, ev.usage);
    } else if (key == "modelUsage") {
      double ignored = 0;
      TokenUsage sum;
      ev.has_model_usage = read_model_usage(v, sum, ignored, &ev.context_window);
      ev.model_usage = sum;
    } else if (key == "parent_tool_use_id") {
      std::string_view id;
      ev.subagent = !v.get_string().get(id) && !id.empty();
    } else if (key == "message") {
      ev.has_message_usage = read_message_usage(v, ev.message_usage);
    } else if (key == "model_usage_since_last_result") {
      TokenUsage sum;
      double cost = 0;
      ev.has_call_usage = read_model_usage(v, sum, cost);
      ev.call_usage = sum;
      ev.call_cost = cost;
    }
  }
  return true;
}
}  // namespace

struct StreamResultReader::Parser {
  od::parser parser;
  simdjson::padded_string buffer;
};

StreamResultReader::StreamResultReader() : parser_(std::make_unique<Parser>()) {}
StreamResultReader::~StreamResultReader() = default;
StreamResultReader::StreamResultReader(StreamResultReader&&) noexcept = default;
StreamResultReader& StreamResultReader::operator=(StreamResultReader&&) noexcept = default;

void StreamResultReader::feed_line(std::string_view line) {
  if (!may_be_wanted(line)) return;
  // simdjson reads in linear time and without recursion; nesting past its depth limit (1024) is
  // an error, and the line is ignored.
  parser_->buffer = simdjson::padded_string(line);
  od::document doc;
  if (parser_->parser.iterate(parser_->buffer).get(doc)) return;
  od::object obj;
  if (doc.get_object().get(obj)) return;
  Event ev;
  if (!read_event(obj, ev)) return;
  if (ev.type == "rate_limit_event") {
    if (ev.rate_limit) result_.rate_limit = std::move(ev.rate_limit);
    return;
  }
  if (ev.type == "system") {
    if (ev.subtype == "api_retry" && result_.api_retries < (1 << 30)) ++result_.api_retries;
    if (ev.subtype == "init" && result_.session_id.empty()) result_.session_id = ev.session_id;
    if (ev.subtype == "init" && result_.client_version.empty()) result_.client_version = ev.version;
    if (ev.subtype == "init" && result_.model.empty()) result_.model = ev.model;
    if (ev.subtype == "compact_boundary") result_.compacted = true;
    return;
  }
  if (ev.type == "assistant") {
    // A message the client made up itself (a refused call's `<synthetic>` one) counts nothing: it
    // leaves the context as it was.
    const uint64_t context =
        ev.message_usage.input + ev.message_usage.cache_creation + ev.message_usage.cache_read;
    if (ev.has_message_usage && !ev.subagent && context > 0) result_.last_context = context;
    return;
  }
  if (ev.type != "result") return;
  result_.has_result = true;
  result_.context_window = ev.context_window;
  // Without an assistant event (or its usage), the main loop's usage of a one-turn call.
  if (result_.last_context == 0 && ev.has_usage)
    result_.last_context = ev.usage.input + ev.usage.cache_creation + ev.usage.cache_read;
  result_.subtype = ev.subtype;
  result_.is_error = ev.is_error || ev.subtype != "success";
  result_.text = std::move(ev.result);
  if (result_.session_id.empty()) result_.session_id = ev.session_id;
  result_.num_turns = ev.num_turns;
  result_.api_error_status.reset();
  if (ev.api_error_status && *ev.api_error_status >= 0 && *ev.api_error_status < 1000)
    result_.api_error_status = static_cast<int>(*ev.api_error_status);
  result_.api_error_type = std::move(ev.api_error_type);
  result_.api_error = std::move(ev.api_error);
  // `modelUsage` counts every API call of the client (the compaction call and other models too);
  // `usage` only the main loop's. From 2.1.277 `modelUsage` and `total_cost_usd` count the whole
  // session, earlier calls of a resumed one included (take_call_share), and newer releases add
  // `model_usage_since_last_result` (same shape, with costs): this call's own, when given.
  result_.reported = SessionTotals{ev.has_model_usage ? ev.model_usage
                                   : ev.has_usage     ? ev.usage
                                                      : TokenUsage{},
                                   ev.has_cost ? ev.cost_usd : 0.0};
  result_.share_given = ev.has_call_usage;
  result_.usage = ev.has_call_usage ? ev.call_usage : result_.reported.usage;
  result_.cost_usd = ev.has_call_usage ? ev.call_cost : result_.reported.cost_usd;
}

void StreamResultReader::feed(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    feed_line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Found by bisecting the releases from 2.1.197 to 2.1.332 against the fake API (a call, then a
// resumed call of the same session): 2.1.276's resumed result holds the call alone, 2.1.277's both.
const char* const kSessionTotalsSince = "2.1.277";

namespace {
std::vector<long> version_parts(std::string_view v) {
  std::vector<long> out;
  while (!v.empty()) {
    const size_t dot = v.find('.');
    const std::string_view part = v.substr(0, dot);
    long n = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return out;
      n = n * 10 + (c - '0');
      if (n > 1'000'000) return {};
    }
    out.push_back(n);
    if (dot == std::string_view::npos) break;
    v.remove_prefix(dot + 1);
  }
  return out;
}

uint64_t minus(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}
}  // namespace

bool reports_session_totals(std::string_view client_version) {
  const auto v = version_parts(client_version);
  return !v.empty() && v >= version_parts(kSessionTotalsSince);
}

SessionTotals take_call_share(StreamResult& result, const std::optional<SessionTotals>& before) {
  const SessionTotals now = result.reported;
  if (result.share_given || !reports_session_totals(result.client_version) || !before) return now;
  result.usage = TokenUsage{minus(now.usage.input, before->usage.input),
                            minus(now.usage.cache_creation, before->usage.cache_creation),
                            minus(now.usage.cache_read, before->usage.cache_read),
                            minus(now.usage.output, before->usage.output)};
  result.cost_usd = now.cost_usd > before->cost_usd ? now.cost_usd - before->cost_usd : 0;
  return now;
}

StreamResult parse_stream_json(std::string_view text) {
  StreamResultReader r;
  r.feed(text);
  return r.result();
}

}  // namespace ctxkit::claude
