#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "claude/stream_result.hpp"

namespace ctxkit::claude {

// Why the API refused a call for now, not for good.
enum class LimitKind { RateLimit, UsageLimit, Overloaded };

std::string_view to_string(LimitKind kind);  // "rate limit", "usage limit", "overloaded"

struct LimitAnswer {
  LimitKind kind = LimitKind::RateLimit;
  // When the client named the reset: seconds since the epoch, never before now (a reset more than
  // a day past is taken as not named, one within that day as now) nor after 9999-12-31 (unless
  // the clock itself is).
  std::optional<int64_t> reset_epoch;
  std::string message;  // what the client said, one line
};

// Whether a call that ended (its stream-json read into `result`, its stderr, its exit code) ended
// on a rate or usage limit or an overload. `now_epoch` turns relative times ("in 30 s", "resets
// 5pm") into an epoch. nullopt: not a limit (a success or any other failure).
std::optional<LimitAnswer> classify_limit(const StreamResult& result, std::string_view stderr_text,
                                          int exit_code, int64_t now_epoch);

}  // namespace ctxkit::claude
