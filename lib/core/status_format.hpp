#pragma once

#include <array>
#include <cstddef>
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
  Capped,       // the tokens the live cap (ctx-cap) kept out of this session, "212k"
  Pins,         // what the last compaction kept of the pins: "pins 3/5 kept, 2 restored"
};

inline constexpr std::array<std::string_view, 15> kStatusFieldNames{
    "percent", "tokens", "usable", "window",      "tier",      "model",  "cost", "compact",
    "5h",      "7d",     "cache",  "compactions", "reclaimed", "capped", "pins"};

// One piece of a parsed format: literal text, or a field.
struct StatusPiece {
  std::string literal;
  std::optional<StatusField> field;
  bool operator==(const StatusPiece&) const = default;
};

// Parses a status-line format: text with `{field}` placeholders, `{{` and `}}` for literal
// braces. An unknown field, an unclosed `{` or a lone `}` is an error of kind Invalid naming it:
// "unknown field '{cost_usd}' (known: percent, tokens, usable, window, tier, model, cost, compact,
// 5h, 7d, cache, compactions, reclaimed, pins)".
[[nodiscard]] Result<std::vector<StatusPiece>> parse_status_format(std::string_view format);

// The values of the fields for one line (empty when unknown, e.g. the cost when the client did
// not send it), indexed by StatusField.
using StatusValues = std::array<std::string, kStatusFieldNames.size()>;

// The most bytes of one field's value a line shows (a longer one is cut and ends in "…").
inline constexpr size_t kMaxStatusFieldBytes = 200;

// The line a parsed format makes with `values`. The values come from the client (the model's
// name, and any field the status input carries) and are made safe for a terminal first: control
// characters (ESC, BEL, newlines, DEL, the C1 range U+0080-U+009F) and bytes that are not UTF-8
// become visible escapes ("\x1b", "\u009b"), so that no value moves the cursor, sets the
// window's title, writes the clipboard or starts another line (util::one_line).
std::string render_status_format(const std::vector<StatusPiece>& pieces,
                                 const StatusValues& values);

}  // namespace ctxkit::core
