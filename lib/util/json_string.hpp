#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "util/json_io.hpp"

namespace ctxkit::util {

// Appends `s` as a JSON string literal, byte for byte as nlohmann::json's dump() writes a
// well-formed UTF-8 string when it is not asked for ASCII output: the quote, the backslash and
// the C0 controls escaped (\b \f \n \r \t, the others \u00xx in lower-case hex), every other
// byte as it is. Returns false, and appends nothing, when `s` is not well-formed UTF-8: what
// replaces the bad bytes is the caller's choice.
bool append_json_string(std::string& out, std::string_view s);

// Appends `s` as a JSON string literal as the library (`Json`, an nlohmann::basic_json) dumps it
// with error_handler_t::replace: through append_json_string, or through the library itself when
// `s` is not well-formed UTF-8 (it replaces the bad bytes).
template <class Json>
void append_json_text(std::string& out, std::string_view s) {
  if (!append_json_string(out, s)) out += dump_json(Json(std::string(s)), -1, BadUtf8::replace);
}

// Appends `v` when it is a string, a boolean, null or an integer, as the library dumps it;
// returns false, appending nothing, for any other value (objects, arrays, floating point, ...).
template <class Json>
bool append_json_scalar(std::string& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      append_json_text<Json>(out, v.template get_ref<const std::string&>());
      return true;
    case Json::value_t::boolean:
      out += v.template get<bool>() ? "true" : "false";
      return true;
    case Json::value_t::null:
      out += "null";
      return true;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char buf[24];
      auto res = v.is_number_unsigned()
                     ? std::to_chars(buf, buf + sizeof buf, v.template get<uint64_t>())
                     : std::to_chars(buf, buf + sizeof buf, v.template get<int64_t>());
      out.append(buf, res.ptr);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace ctxkit::util
