#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

// Helpers that reproduce what the reference implementation's JavaScript runtime does to strings
// and JSON, so that state files and tool answers come out byte for byte the same.
namespace ctxkit::workflow::js {

// JSON.stringify(value, null, indent) (indent 0: compact). Members holding a discarded value are
// left out (they stand for `undefined`, which keeps its key's place in a JavaScript object);
// object keys that are array indices ("0", "17") come first in ascending order, as JavaScript
// orders them; numbers print as JavaScript prints them; invalid UTF-8 becomes U+FFFD.
std::string stringify(const nlohmann::ordered_json& value, int indent);

// Appends JSON.stringify(value, null, indent) as written nested `level` levels deep (its lines
// after the first indented by indent * level more).
void append_stringified(std::string& out, const nlohmann::ordered_json& value, int indent,
                        int level);

// Appends `s` as JSON.stringify writes a string (invalid UTF-8 becomes U+FFFD).
void append_string(std::string& out, std::string_view s);

// String.prototype.trim(): strips JavaScript white space and line terminators at both ends.
std::string trim(std::string_view s);

// The length of a UTF-8 string in UTF-16 code units (String.prototype.length).
size_t utf16_length(std::string_view s);

// s.substring(0, units) in UTF-16 code units. A cut through a surrogate pair drops the half
// pair (JavaScript would keep a lone surrogate, which UTF-8 cannot hold).
std::string utf16_prefix(std::string_view s, size_t units);

// Every occurrence of `needle` replaced by `replacement`, taken literally. (The reference
// implementation uses String.prototype.replace, which would also read "$&", "$$", "$`" and "$'"
// in a task's id or title as patterns; ctxkit inserts the text as given.)
std::string replace_all(std::string_view s, std::string_view needle, std::string_view replacement);

// Removes the C0 control characters and DEL (the class [\x00-\x1F\x7F]).
std::string strip_controls(std::string_view s);

}  // namespace ctxkit::workflow::js
