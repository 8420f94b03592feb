#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::util {

// Milliseconds since the Unix epoch, from the system clock.
int64_t now_ms();
// Parses an ISO 8601 UTC time such as "2026-11-21T12:55:28.725Z" into Unix milliseconds;
// nullopt when the text is not of that form.
std::optional<int64_t> parse_iso8601_ms(std::string_view text);
// Formats Unix milliseconds as "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string format_iso8601_ms(int64_t ms);
// Formats Unix milliseconds as a compact UTC stamp "YYYYMMDDTHHMMSSZ" for file names.
std::string format_compact_utc(int64_t ms);

}  // namespace ctxkit::util
