#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::util {

// `s` with the ASCII letters A-Z lowered; every other byte (UTF-8 included) kept as it is.
std::string ascii_lower(std::string_view s);

// The items of a list such as "Read, Bash,Grep": split at each `separator`, the spaces around an
// item removed, empty items left out.
std::vector<std::string> split_list(std::string_view list, char separator = ',');

// The lines of `text`: split at each '\n', a '\r' that ends a line removed; nothing after a
// final newline (empty text has no line; an empty line inside is one).
std::vector<std::string_view> split_lines(std::string_view text);

// A 64-bit FNV-1a hash fed piece by piece. Its offset basis is the standard one short of its last
// digit, as ctxkit has always used it: the handles of archived outputs are made with it.
struct Fnv1a {
  uint64_t value = 1469598103934665603ull;
  void add(const void* data, size_t size) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) value = (value ^ b[i]) * 1099511628211ull;
  }
  void add(std::string_view s) { add(s.data(), s.size()); }
};

}  // namespace ctxkit::util
