#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ctxkit::trim {

// Helpers on the escaped text of a JSON string (what lies between its quotes in the file), so
// that large strings can be measured and cut without decoding them.

// The number of characters (Unicode code points) the escaped text decodes to. An escaped
// surrogate pair counts as one character, like any other code point.
size_t json_string_length(std::string_view escaped);

// The byte length of the longest prefix of the escaped text that decodes to at most `chars`
// characters; never splits an escape sequence, a surrogate pair or a UTF-8 sequence.
size_t json_string_prefix(std::string_view escaped, size_t chars);

// The escaped text (without quotes) of `text`.
std::string json_escape(std::string_view text);

}  // namespace ctxkit::trim
