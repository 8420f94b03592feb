#pragma once

#include <string>
#include <string_view>

namespace ctxkit::util {

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);
// Returns `text` with every ill-formed UTF-8 sequence replaced by U+FFFD and every JSON escape
// of a lone UTF-16 surrogate ("\ud800" without its pair) replaced by "\ufffd", so that a strict
// JSON parser accepts what the client wrote.
std::string sanitize_json_text(std::string_view text);
// The UTF-16 code units of `text` as JavaScript decodes UTF-8 (TextDecoder, Buffer): a character
// above U+FFFF becomes a surrogate pair, and each ill-formed sequence (its maximal well-formed
// prefix, or one byte) one U+FFFD.
std::u16string utf16_of(std::string_view text);

}  // namespace ctxkit::util
