#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::util {

// Milliseconds since the Unix epoch, from the system clock.
int64_t now_ms();
// Parses an ISO 8601 date or time into Unix milliseconds: "2026-11-21", "2026-11-21T12:55",
// "2026-11-21T12:55:28", with optional fraction ("...:28.725"), and an optional zone ("Z",
// "+01:00", "-05:30"; none means UTC); a space may replace the "T". nullopt for anything else,
// trailing text and impossible dates (2026-02-30) included.
std::optional<int64_t> parse_iso8601_ms(std::string_view text);
// Formats Unix milliseconds as "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string format_iso8601_ms(int64_t ms);
// Formats Unix milliseconds as a compact UTC stamp "YYYYMMDDTHHMMSSZ" for file names.
std::string format_compact_utc(int64_t ms);

}  // namespace ctxkit::util
