#include "util/one_line.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <ostream>

namespace ctxkit::util {

namespace {

// Length of the well-formed UTF-8 sequence at `s[i]` (2-4), or 0 when it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) >= 0xa0))) return 0;
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || (c == 0xf4 && b(i + 1) >= 0x90))) return 0;
  return n;
}

}  // namespace

std::string one_line(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  for (size_t i = 0; i < text.size();) {
    std::string piece;
    const auto c = static_cast<unsigned char>(text[i]);
    size_t used = 1;
    if (c == '\n')
      piece = "\\n";
    else if (c == '\r')
      piece = "\\r";
    else if (c == '\t')
      piece = "\\t";
    else if (c < 0x20 || c == 0x7f)
      piece = fmt::format("\\x{:02x}", c);
    else if (c < 0x80)
      piece.assign(1, static_cast<char>(c));
    else if (size_t n = utf8_sequence(text, i); n == 0)
      piece = fmt::format("\\x{:02x}", c);
    else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      piece = fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));  // C1 control
      used = 2;
    } else {
      piece.assign(text.substr(i, n));
      used = n;
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "…";
      return out;
    }
    out += piece;
    i += used;
  }
  return out;
}

void print_error(std::ostream& err, std::string_view tool, std::string_view message) {
  err << tool << ": error: " << one_line(message) << '\n';
}

void print_note(std::ostream& err, std::string_view tool, std::string_view text) {
  err << tool << ": " << one_line(text) << '\n';
}

}  // namespace ctxkit::util
