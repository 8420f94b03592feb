#include "util/utf8.hpp"

#include <cstdint>

namespace ctxkit::util {

namespace {
// Length of the well-formed UTF-8 sequence at s[i], or 0 if it is ill-formed.
size_t sequence_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) return 1;
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;
    if (c == 0xED && b(i + 1) > 0x9F) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;
    if (c == 0xF4 && b(i + 1) > 0x8F) return 0;
    return 4;
  }
  return 0;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses "\uXXXX" at s[i]; returns the code unit or -1.
int escape_at(std::string_view s, size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  int v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    int h = hex_value(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}
}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string sanitize_json_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      int u = escape_at(s, i);
      if (u >= 0xD800 && u <= 0xDBFF) {
        int lo = escape_at(s, i + 6);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
          out.append(s.substr(i, 12));
          i += 12;
        } else {
          out.append("\\ufffd");
          i += 6;
        }
        continue;
      }
      if (u >= 0xDC00 && u <= 0xDFFF) {
        out.append("\\ufffd");
        i += 6;
        continue;
      }
      out.append(s.substr(i, 2));
      i += 2;
      continue;
    }
    size_t n = sequence_length(s, i);
    if (n == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::u16string utf16_of(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = b(i);
    if (c < 0x80) {
      out.push_back(c);
      ++i;
      continue;
    }
    // How many continuation bytes the lead byte asks for, and the range of the first of them
    // (which rules out overlong forms, surrogates and code points past U+10FFFF).
    size_t need = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      cp = c & 0x0Fu;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      cp = c & 0x07u;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    size_t k = 1;
    for (; need > 0 && k <= need; ++k) {
      if (i + k >= s.size() || b(i + k) < lo || b(i + k) > hi) break;
      cp = (cp << 6) | (b(i + k) & 0x3Fu);
      lo = 0x80;
      hi = 0xBF;
    }
    if (need == 0 || k <= need) {
      out.push_back(u'\uFFFD');
      i += need == 0 ? 1 : k;
      continue;
    }
    i += k;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FFu)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

}  // namespace ctxkit::util
