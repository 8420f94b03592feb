#pragma once

#include <string>
#include <string_view>

namespace ctxkit::util {

// Appends `s` as a JSON string literal, byte for byte as nlohmann::json's dump() writes a
// well-formed UTF-8 string when it is not asked for ASCII output: the quote, the backslash and
// the C0 controls escaped (\b \f \n \r \t, the others \u00xx in lower-case hex), every other
// byte as it is. Returns false, and appends nothing, when `s` is not well-formed UTF-8: what
// replaces the bad bytes is the caller's choice.
bool append_json_string(std::string& out, std::string_view s);

}  // namespace ctxkit::util
