#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ctxkit::util {

// The default cap of a diagnostic line's text, in bytes.
inline constexpr size_t kOneLineMax = 2000;

// `text` made safe for one line of a terminal: control characters (newlines, tabs, escape, DEL,
// the C1 range U+0080-U+009F) become C-style escapes ("\n", "\t", "\x1b", "\u009b"), bytes that
// are not UTF-8 become "\xNN", and text past `max_bytes` is cut at a character boundary and
// ends in "…". Everything else (printable ASCII and UTF-8) is kept as it is.
std::string one_line(std::string_view text, size_t max_bytes = kOneLineMax);

}  // namespace ctxkit::util
