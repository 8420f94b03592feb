#pragma once

#include <cstddef>
#include <iosfwd>
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

// The one stderr line of a program: "<tool>: error: <message>". The message (which may carry
// paths, ids and event names from the input) is made one line by one_line().
void print_error(std::ostream& err, std::string_view tool, std::string_view message);
// "<tool>: <text>" for notes and warnings, made one line the same way.
void print_note(std::ostream& err, std::string_view tool, std::string_view text);

}  // namespace ctxkit::util
