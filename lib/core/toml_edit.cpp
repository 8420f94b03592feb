#include "core/toml_edit.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/config.hpp"
#include "util/utf8.hpp"

namespace ctxkit::core {
namespace {

using Path = std::vector<std::string>;

bool is_bare_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

std::string key_text(std::string_view name) {
  if (!name.empty()) {
    bool bare = true;
    for (char c : name) bare = bare && is_bare_char(c);
    if (bare) return std::string(name);
  }
  return toml_basic_string(name);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A scanner over a document toml++ has accepted: it finds statements, keys and value spans
// without building values.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  size_t size() const { return s_.size(); }
  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }

  size_t skip_blanks(size_t i) const {
    while (i < s_.size() && (s_[i] == ' ' || s_[i] == '\t')) ++i;
    return i;
  }
  // The offset just past the end of the line holding `i` (past its '\n', or the end).
  size_t next_line(size_t i) const {
    auto nl = s_.find('\n', i);
    return nl == std::string_view::npos ? s_.size() : nl + 1;
  }
  bool at_line_end(size_t i) const {
    return i >= s_.size() || s_[i] == '\n' || (s_[i] == '\r' && at(i + 1) == '\n');
  }

  // One key part (bare, "basic" or 'literal'), decoded; `i` moves past it.
  std::string key_part(size_t& i) const {
    std::string out;
    const char q = at(i);
    if (q == '"') {
      ++i;
      while (i < s_.size() && s_[i] != '"') {
        if (s_[i] == '\\') {
          out += unescape(i);
        } else {
          out += s_[i++];
        }
      }
      ++i;
    } else if (q == '\'') {
      ++i;
      while (i < s_.size() && s_[i] != '\'') out += s_[i++];
      ++i;
    } else {
      while (i < s_.size() && is_bare_char(s_[i])) out += s_[i++];
    }
    return out;
  }

  // A dotted key: part (. part)*; `i` moves past it and the blanks after it.
  Path key_path(size_t& i) const {
    Path path;
    while (true) {
      i = skip_blanks(i);
      path.push_back(key_part(i));
      i = skip_blanks(i);
      if (at(i) != '.') return path;
      ++i;
    }
  }

  // The end of the string starting at `i` (a quote), and whether it is multi-line.
  size_t string_end(size_t i, bool& multiline) const {
    const char q = s_[i];
    multiline = s_.substr(i, 3) == std::string(3, q);
    if (multiline) {
      size_t j = i + 3;
      while (j < s_.size()) {
        if (q == '"' && s_[j] == '\\') {
          j += 2;
          continue;
        }
        if (s_.substr(j, 3) == std::string(3, q)) {
          j += 3;
          for (int extra = 0; extra < 2 && at(j) == q; ++extra)
            ++j;  // """a"""" is a" plus the delimiter
          return j;
        }
        ++j;
      }
      return s_.size();
    }
    size_t j = i + 1;
    while (j < s_.size() && s_[j] != q) {
      if (q == '"' && s_[j] == '\\') ++j;
      ++j;
    }
    return std::min(j + 1, s_.size());
  }

  struct Value {
    size_t begin = 0, end = 0;
    bool multiline_string = false;
    bool inline_table = false;
  };

  // The value starting at `i`.
  Value value(size_t i) const {
    Value v;
    v.begin = i;
    const char c = at(i);
    if (c == '"' || c == '\'') {
      v.end = string_end(i, v.multiline_string);
      return v;
    }
    if (c == '[' || c == '{') {
      v.inline_table = c == '{';
      int depth = 0;
      size_t j = i;
      while (j < s_.size()) {
        const char d = s_[j];
        if (d == '"' || d == '\'') {
          bool ml = false;
          j = string_end(j, ml);
          continue;
        }
        if (d == '#') {
          j = s_.find('\n', j);
          if (j == std::string_view::npos) j = s_.size();
          continue;
        }
        if (d == '[' || d == '{') ++depth;
        if (d == ']' || d == '}') {
          if (--depth == 0) {
            v.end = j + 1;
            return v;
          }
        }
        ++j;
      }
      v.end = s_.size();
      return v;
    }
    // A number, boolean or date: up to a comment or the end of the line, blanks trimmed (a date
    // may hold a space).
    size_t j = i;
    while (j < s_.size() && s_[j] != '#' && s_[j] != '\n' && s_[j] != '\r') ++j;
    while (j > i && (s_[j - 1] == ' ' || s_[j - 1] == '\t')) --j;
    v.end = j;
    return v;
  }

 private:
  // An escape sequence at `i` (a backslash), decoded; `i` moves past it.
  std::string unescape(size_t& i) const {
    const char e = at(i + 1);
    i += 2;
    switch (e) {
      case 'b':
        return "\b";
      case 't':
        return "\t";
      case 'n':
        return "\n";
      case 'f':
        return "\f";
      case 'r':
        return "\r";
      case '"':
        return "\"";
      case '\\':
        return "\\";
      case 'u':
      case 'U': {
        const size_t len = e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < len && i < s_.size(); ++k, ++i) {
          const char h = s_[i];
          cp = cp * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        std::string out;
        append_utf8(out, cp);
        return out;
      }
      default:
        return std::string(1, e);
    }
  }

  std::string_view s_;
};

std::unexpected<Error> invalid(std::string message) {
  return fail(std::move(message), Error::Kind::Invalid);
}

}  // namespace

std::string toml_basic_string(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7F)
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  out += '"';
  return out;
}

Result<std::string> set_toml_string(std::string_view text, std::string_view table,
                                    std::string_view key, std::string_view value) {
  const std::string name = fmt::format("{}.{}", table, key);
  for (std::string_view part : {table, key, value})
    if (!util::is_valid_utf8(part))
      return invalid(fmt::format("setting {}: not valid UTF-8", name));
  if (auto parsed = toml_string_value(text, table, key); !parsed)
    return invalid("invalid TOML: " + parsed.error().message);

  const Scanner sc(text);
  const std::string eol = [&] {
    auto nl = text.find('\n');
    return nl != std::string_view::npos && nl > 0 && text[nl - 1] == '\r' ? std::string("\r\n")
                                                                          : std::string("\n");
  }();

  Path current;            // the table of the statements being read
  bool in_target = false;  // current == [table]
  bool found_table = false;
  std::optional<Scanner::Value> found;  // the value of `key` in [table]
  size_t content_end = 0;               // past the line of the target table's last non-blank line
  bool blank_since_content = false;
  std::string key_indent;  // the indentation of the target table's last key line

  for (size_t i = 0; i < sc.size();) {
    const size_t line_start = i;
    i = sc.skip_blanks(i);
    if (sc.at_line_end(i)) {  // a blank line
      if (in_target) blank_since_content = true;
      i = sc.next_line(i);
      continue;
    }
    if (sc.at(i) == '#') {  // a comment line
      i = sc.next_line(i);
      if (in_target && !blank_since_content) content_end = i;
      continue;
    }
    if (sc.at(i) == '[') {  // a table header
      const bool array = sc.at(i + 1) == '[';
      i += array ? 2 : 1;
      Path path = sc.key_path(i);
      i = sc.next_line(i);
      in_target = false;
      current = path;
      if (!path.empty() && path[0] == table) {
        if (path.size() == 1 && array)
          return invalid(
              fmt::format("setting {}: [[{}]] is an array of tables, not edited", name, table));
        if (path.size() >= 2 && path[1] == key)
          return invalid(fmt::format("setting {}: '{}' is a table ([{}]), not a string", name, name,
                                     fmt::join(path, ".")));
        if (path.size() == 1) {
          in_target = found_table = true;
          content_end = i;
          blank_since_content = false;
        }
      }
      continue;
    }
    // A key/value statement.
    Path path = sc.key_path(i);
    i = sc.skip_blanks(i + 1);  // past '='
    const Scanner::Value v = sc.value(i);
    const size_t end = sc.next_line(v.end);
    if (current.empty() && path[0] == table) {
      if (path.size() == 1 && v.inline_table)
        return invalid(fmt::format("setting {}: [{}] is an inline table ({} = {{…}}), not edited",
                                   name, table, table));
      if (path.size() == 1)
        return invalid(fmt::format("setting {}: '{}' is not a table", name, table));
      if (path[1] == key)
        return invalid(fmt::format(
            "setting {}: set by the dotted key '{}' at the top level, not edited", name, name));
      return invalid(fmt::format(
          "setting {}: [{}] is defined by dotted keys ({}.{} = …) at the top level, not edited",
          name, table, table, path[1]));
    }
    if (in_target) {
      if (path[0] == key) {
        if (path.size() > 1)
          return invalid(fmt::format("setting {}: '{}' is a table ({}.{} = …), not a string", name,
                                     name, key, path[1]));
        if (v.multiline_string)
          return invalid(
              fmt::format("setting {}: the value is a multi-line string, not edited", name));
        found = v;
      }
      key_indent = std::string(text.substr(line_start, sc.skip_blanks(line_start) - line_start));
      content_end = end;
      blank_since_content = false;
    }
    i = end;
  }

  const std::string assignment = fmt::format("{} = {}", key_text(key), toml_basic_string(value));
  std::string out;
  if (found) {
    out.reserve(text.size() + value.size());
    out.append(text.substr(0, found->begin))
        .append(toml_basic_string(value))
        .append(text.substr(found->end));
  } else if (found_table) {
    out.append(text.substr(0, content_end));
    if (!out.empty() && out.back() != '\n') out += eol;
    out.append(key_indent).append(assignment).append(eol).append(text.substr(content_end));
  } else if (text.empty()) {
    out = fmt::format("[{}]{}{}{}", key_text(table), eol, assignment, eol);
  } else {
    out.append(text);
    if (out.back() != '\n') out += eol;
    out.append(fmt::format("{}[{}]{}{}{}", eol, key_text(table), eol, assignment, eol));
  }

  auto check = toml_string_value(out, table, key);
  if (!check)
    return invalid(fmt::format("setting {}: the edited document would not parse ({}); not changed",
                               name, check.error().message));
  if (!*check || **check != value)
    return invalid(
        fmt::format("setting {}: the edited document does not hold the value; not changed", name));
  return out;
}

}  // namespace ctxkit::core
