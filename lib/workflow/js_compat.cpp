#include "workflow/js_compat.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "util/json_io.hpp"
#include "util/json_string.hpp"

namespace ctxkit::workflow::js {
namespace {
using ojson = nlohmann::ordered_json;

// Decodes one UTF-8 sequence at `i`; returns the code point and advances `i`. Invalid bytes
// decode as U+FFFD, one byte at a time.
char32_t decode(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  if ((b0 & 0xE0) == 0xC0 && b0 >= 0xC2 && cont(1)) {
    char32_t c = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
    i += 2;
    return c;
  }
  if ((b0 & 0xF0) == 0xE0 && cont(1) && cont(2)) {
    char32_t c = ((b0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                 (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {
      i += 3;
      return c;
    }
  }
  if ((b0 & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
    char32_t c = ((b0 & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                 ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
                 (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
    if (c >= 0x10000 && c <= 0x10FFFF) {
      i += 4;
      return c;
    }
  }
  ++i;
  return 0xFFFD;
}

bool is_js_space(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

// An object key that JavaScript treats as an array index: the canonical decimal form of an
// integer below 2^32 - 1.
bool is_array_index(const std::string& k, uint64_t& value) {
  if (k.empty() || k.size() > 10) return false;
  if (k.size() > 1 && k[0] == '0') return false;
  value = 0;
  for (char c : k) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value < 4294967295ULL;
}

std::string number_to_string(double v) {
  if (std::isnan(v) || std::isinf(v)) return "null";
  if (v == 0) return "0";
  if (v < 0) {
    // Appended rather than "-" + s: GCC 12 warns (-Wrestrict) about that operator+ at -O3.
    std::string out(1, '-');
    out += number_to_string(-v);
    return out;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const auto epos = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < epos; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int n = std::stoi(sci.substr(epos + 1)) + 1;
  const int k = static_cast<int>(digits.size());
  if (k <= n && n <= 21) return digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21)
    return digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  if (-6 < n && n <= 0) {
    std::string out("0.");
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
    return out;
  }
  const int e = n - 1;
  std::string out = digits.substr(0, 1);
  if (k > 1) {
    out += '.';  // not `"." + substr`: GCC 12 reports it as a memcpy out of bounds (bug 105329)
    out.append(digits, 1);
  }
  out += e < 0 ? "e-" : "e+";
  out += std::to_string(e < 0 ? -e : e);
  return out;
}

void write(const ojson& v, int indent, int level, std::string& out) {
  switch (v.type()) {
    case ojson::value_t::object: {
      // Collect (key, value) references in JavaScript order.
      std::vector<std::pair<const std::string*, const ojson*>> members;
      std::vector<std::pair<uint64_t, std::pair<const std::string*, const ojson*>>> first;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.value().is_discarded()) continue;
        uint64_t idx = 0;
        if (is_array_index(it.key(), idx))
          first.push_back({idx, {&it.key(), &it.value()}});
        else
          members.push_back({&it.key(), &it.value()});
      }
      std::stable_sort(first.begin(), first.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<std::pair<const std::string*, const ojson*>> ordered;
      for (auto& f : first) ordered.push_back(f.second);
      ordered.insert(ordered.end(), members.begin(), members.end());
      if (ordered.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      const std::string pad =
          indent > 0 ? std::string(static_cast<size_t>(indent * (level + 1)), ' ') : "";
      bool first_member = true;
      for (const auto& [key, value] : ordered) {
        if (!first_member) out += ',';
        first_member = false;
        if (indent > 0) {
          out += '\n';
          out += pad;
        }
        // JSON.stringify's escaping for well-formed text; the library replaces ill-formed bytes.
        util::append_json_text<ojson>(out, *key);
        out += indent > 0 ? ": " : ":";
        write(*value, indent, level + 1, out);
      }
      if (indent > 0) {
        out += '\n';
        out += std::string(static_cast<size_t>(indent * level), ' ');
      }
      out += '}';
      return;
    }
    case ojson::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      const std::string pad =
          indent > 0 ? std::string(static_cast<size_t>(indent * (level + 1)), ' ') : "";
      bool first_elem = true;
      for (const auto& e : v) {
        if (!first_elem) out += ',';
        first_elem = false;
        if (indent > 0) {
          out += '\n';
          out += pad;
        }
        if (e.is_discarded())
          out += "null";
        else
          write(e, indent, level + 1, out);
      }
      if (indent > 0) {
        out += '\n';
        out += std::string(static_cast<size_t>(indent * level), ' ');
      }
      out += ']';
      return;
    }
    case ojson::value_t::number_float:
      out += number_to_string(v.get<double>());
      return;
    case ojson::value_t::discarded:
    case ojson::value_t::null:
      out += "null";
      return;
    default:
      if (!util::append_json_scalar(out, v)) out += util::dump_json(v, -1, util::BadUtf8::replace);
      return;
  }
}
}  // namespace

void append_stringified(std::string& out, const nlohmann::ordered_json& value, int indent,
                        int level) {
  write(value, indent, level, out);
}

void append_string(std::string& out, std::string_view s) {
  util::append_json_text<ojson>(out, s);
}

std::string stringify(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  write(value, indent, 0, out);
  return out;
}

std::string trim(std::string_view s) {
  size_t begin = 0, end = s.size();
  while (begin < end) {
    size_t i = begin;
    if (!is_js_space(decode(s, i))) break;
    begin = i;
  }
  // Walk forward to find the last non-space code point.
  size_t last_end = begin;
  size_t i = begin;
  while (i < end) {
    char32_t c = decode(s, i);
    if (!is_js_space(c)) last_end = i;
  }
  return std::string(s.substr(begin, last_end - begin));
}

size_t utf16_length(std::string_view s) {
  size_t units = 0;
  for (size_t i = 0; i < s.size();) units += decode(s, i) >= 0x10000 ? 2u : 1u;
  return units;
}

std::string utf16_prefix(std::string_view s, size_t units) {
  size_t used = 0, i = 0;
  while (i < s.size()) {
    size_t next = i;
    const size_t w = decode(s, next) >= 0x10000 ? 2u : 1u;
    if (used + w > units) break;
    used += w;
    i = next;
  }
  return std::string(s.substr(0, i));
}

std::string replace_all(std::string_view s, std::string_view needle, std::string_view replacement) {
  if (needle.empty()) return std::string(s);
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = s.find(needle, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(replacement);
    pos = hit + needle.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::string strip_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) continue;
    out += c;
  }
  return out;
}

}  // namespace ctxkit::workflow::js
