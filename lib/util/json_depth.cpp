#include "util/json_depth.hpp"

#include <cstring>

namespace ctxkit::util {

std::size_t json_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > limit) return deepest;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

namespace {
bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The position of the quote that ends the string whose content starts at `i`, or npos. The content
// is skipped a quote at a time (memchr), a quote after an odd run of backslashes being escaped.
std::size_t string_end(std::string_view text, std::size_t i) {
  while (i < text.size()) {
    const void* q = std::memchr(text.data() + i, '"', text.size() - i);
    if (!q) return std::string_view::npos;
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - text.data());
    std::size_t backslashes = 0;
    while (at > backslashes && text[at - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return at;
    i = at + 1;
  }
  return std::string_view::npos;
}
}  // namespace

std::optional<std::vector<std::pair<std::string_view, std::string_view>>> json_top_level_members(
    std::string_view text, bool (*want)(std::string_view name), std::size_t limit) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  std::size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  if (i == text.size() || text[i] != '{' || limit == 0) return std::nullopt;
  ++i;
  std::size_t depth = 1;
  // At the top level: a name is expected after '{' or ',', its value after ':'.
  bool expect_name = true;
  std::string_view name;
  std::size_t value_start = std::string_view::npos;
  auto close_value = [&](std::size_t end) {
    if (value_start == std::string_view::npos) return;
    std::string_view v = text.substr(value_start, end - value_start);
    while (!v.empty() && is_space(v.front())) v.remove_prefix(1);
    while (!v.empty() && is_space(v.back())) v.remove_suffix(1);
    if (want(name)) out.emplace_back(name, v);
    value_start = std::string_view::npos;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = string_end(text, i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      if (depth == 1 && expect_name) {
        name = text.substr(i + 1, end - i - 1);
        expect_name = false;
      }
      i = end + 1;
      continue;
    }
    switch (c) {
      case ':':
        if (depth == 1 && value_start == std::string_view::npos) value_start = i + 1;
        break;
      case '{':
      case '[':
        if (++depth > limit) return std::nullopt;
        break;
      case '}':
      case ']':
        if (depth == 1) {
          if (c != '}') return std::nullopt;
          close_value(i);
          return out;
        }
        --depth;
        break;
      case ',':
        if (depth == 1) {
          close_value(i);
          expect_name = true;
        }
        break;
      default:
        break;
    }
    ++i;
  }
  return std::nullopt;  // cut short
}

}  // namespace ctxkit::util
