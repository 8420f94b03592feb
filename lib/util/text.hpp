#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::util {

// `s` with the ASCII letters A-Z lowered; every other byte (UTF-8 included) kept as it is.
std::string ascii_lower(std::string_view s);

// The items of a list such as "Read, Bash,Grep": split at each `separator`, the spaces around an
// item removed, empty items left out.
std::vector<std::string> split_list(std::string_view list, char separator = ',');

}  // namespace ctxkit::util
