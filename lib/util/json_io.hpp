#pragma once

// JSON text in and out, compiled once. nlohmann/json's parser (lexer, SAX driver) and serializer
// (with its floating-point printer) are templates instantiated in every file that calls parse()
// or dump(): at -O3 about a seventh of the library's code, compiled again in each of those
// files. Every file parses and writes through these functions instead; json_io.cpp holds the one
// copy of each.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ctxkit::util {

// What dump_json does with a string that is not well-formed UTF-8.
enum class BadUtf8 {
  fail,     // throws nlohmann::json::type_error (316), as dump() does
  replace,  // writes U+FFFD for each bad byte sequence
};

// The value as text: on one line (indent < 0), or indented by `indent` spaces. Non-ASCII
// characters are written as they are.
std::string dump_json(const nlohmann::json& v, int indent = -1, BadUtf8 bad = BadUtf8::fail);
std::string dump_json(const nlohmann::ordered_json& v, int indent = -1,
                      BadUtf8 bad = BadUtf8::fail);

// Parses `text` as one JSON value. Not JSON: a value whose is_discarded() is true.
nlohmann::json parse_json(std::string_view text);
nlohmann::ordered_json parse_ordered_json(std::string_view text);

// Parses `text` as one JSON value, or throws nlohmann::json::parse_error as parse() does (its
// what() says where and why).
nlohmann::json parse_json_or_throw(std::string_view text);
nlohmann::ordered_json parse_ordered_json_or_throw(std::string_view text);

// The member `key` of `v`, or nullptr when `v` is not an object or has no such member. Compiled
// here, out of line: GCC 12 follows find()'s iterator into code that dereferences it and warns of
// a null pointer (-Wnull-dereference) where the caller checked it against end().
const nlohmann::json* json_member(const nlohmann::json& v, std::string_view key);

}  // namespace ctxkit::util
