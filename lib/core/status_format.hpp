#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::core {

// The fields a `[status] format` may name, in the order of kStatusFieldNames.
enum class StatusField {
  Percent,
  Tokens,
  Usable,
  Window,
  Tier,
  Model,
  Cost,
  Compact,      // "48% until auto-compact" or "42% of window" (the client's words)
  Limit5h,      // the 5-hour rate limit's use, "31%" ("31% ↻14:00" with its reset)
  Limit7d,      // the 7-day one
  Cache,        // the prompt cache: "warm 4m" (time left), "cold"
  Compactions,  // compactions of this session
  Reclaimed,    // the tokens they freed, "212k"
};

inline constexpr std::array<std::string_view, 13> kStatusFieldNames{
    "percent", "tokens", "usable", "window",      "tier",     "model", "cost",
    "compact", "5h",     "7d",     "cache",       "compactions", "reclaimed"};

// One piece of a parsed format: literal text, or a field.
struct StatusPiece {
  std::string literal;
  std::optional<StatusField> field;
  bool operator==(const StatusPiece&) const = default;
};

// Parses a status-line format: text with `{field}` placeholders, `{{` and `}}` for literal
// braces. An unknown field, an unclosed `{` or a lone `}` is an error of kind Invalid naming it:
// "unknown field '{cost_usd}' (known: percent, tokens, usable, window, tier, model, cost, compact, 5h, 7d, cache, compactions, reclaimed)".
Result<std::vector<StatusPiece>> parse_status_format(std::string_view format);

// The values of the fields for one line (empty when unknown, e.g. the cost when the client did
// not send it), indexed by StatusField.
using StatusValues = std::array<std::string, kStatusFieldNames.size()>;

// The line a parsed format makes with `values`.
std::string render_status_format(const std::vector<StatusPiece>& pieces,
                                 const StatusValues& values);

}  // namespace ctxkit::core
