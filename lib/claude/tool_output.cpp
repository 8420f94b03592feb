#include "claude/tool_output.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cstring>

#include "util/json_string.hpp"
#include "util/utf8.hpp"

namespace ctxkit::claude {

namespace {

constexpr int kMaxDepth = 256;

std::unexpected<Error> failed(Error e) {
  return std::unexpected(std::move(e));
}

class Scanner {
 public:
  Scanner(char* data, size_t size) : begin_(data), p_(data), end_(data + size) {}

  Error error(const std::string& what) const {
    return Error{fmt::format("hook payload: {} at byte {}", what, static_cast<size_t>(p_ - begin_)),
                 Error::Kind::Invalid};
  }

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool at(char c) {
    ws();
    return p_ < end_ && *p_ == c;
  }
  char* pos() const { return p_; }

  // The closing quote of the string that starts at p_ (a quote), without decoding it.
  Result<char*> string_end() {
    char* q = p_ + 1;
    for (;;) {
      auto* hit = static_cast<char*>(std::memchr(q, '"', static_cast<size_t>(end_ - q)));
      if (!hit) return failed(error("unterminated string"));
      size_t slashes = 0;
      for (char* b = hit; b > p_ + 1 && b[-1] == '\\'; --b) ++slashes;
      if (slashes % 2 == 0) return hit;
      q = hit + 1;
    }
  }

  Result<void> skip_string() {
    auto close = string_end();
    if (!close) return failed(close.error());
    p_ = *close + 1;
    return {};
  }

  // Decodes the string at p_ in place; the view points into the buffer.
  Result<std::string_view> string() {
    if (!at('"')) return failed(error("expected a string"));
    auto close = string_end();
    if (!close) return failed(close.error());
    char* s = p_ + 1;
    char* e = *close;
    p_ = e + 1;
    // One pass that vectorizes (no early exit): any control character at all.
    unsigned control = 0;
    for (const char* c = s; c < e; ++c) control |= static_cast<unsigned char>(*c) < 0x20;
    if (control) return failed(error("control character in a string"));
    auto* first = static_cast<char*>(std::memchr(s, '\\', static_cast<size_t>(e - s)));
    if (!first) return std::string_view(s, static_cast<size_t>(e - s));
    char* w = first;
    for (char* r = first; r < e;) {
      if (*r != '\\') {
        // The run up to the next escape, moved down 8 bytes at a time (the writer is never
        // ahead of the reader). Escapes come every few dozen bytes in a log (each line ends in
        // one), where a memchr and a memmove per run cost several times this.
        while (e - r >= 8) {
          uint64_t word;
          std::memcpy(&word, r, 8);
          const uint64_t t = word ^ 0x5c5c5c5c5c5c5c5cull;  // a zero byte where a backslash is
          if (((t - 0x0101010101010101ull) & ~t & 0x8080808080808080ull) != 0) break;
          std::memcpy(w, &word, 8);
          w += 8;
          r += 8;
        }
        while (r < e && *r != '\\') *w++ = *r++;
        continue;
      }
      if (r + 1 >= e) return failed(error("bad escape"));
      char k = r[1];
      r += 2;
      switch (k) {
        case '"':
          *w++ = '"';
          break;
        case '\\':
          *w++ = '\\';
          break;
        case '/':
          *w++ = '/';
          break;
        case 'b':
          *w++ = '\b';
          break;
        case 'f':
          *w++ = '\f';
          break;
        case 'n':
          *w++ = '\n';
          break;
        case 'r':
          *w++ = '\r';
          break;
        case 't':
          *w++ = '\t';
          break;
        case 'u': {
          auto hex4 = [&](char* h) -> long {
            if (e - h < 4) return -1;
            long v = 0;
            for (int i = 0; i < 4; ++i) {
              char c = h[i];
              int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
              if (d < 0) return -1;
              v = v * 16 + d;
            }
            return v;
          };
          long cp = hex4(r);
          if (cp < 0) return failed(error("bad \\u escape"));
          r += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF && e - r >= 6 && r[0] == '\\' && r[1] == 'u') {
            long lo = hex4(r + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              r += 6;
            }
          }
          if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate
          auto put = [&](long v) { *w++ = static_cast<char>(static_cast<unsigned char>(v)); };
          if (cp < 0x80) {
            put(cp);
          } else if (cp < 0x800) {
            put(0xC0 | (cp >> 6));
            put(0x80 | (cp & 0x3F));
          } else if (cp < 0x10000) {
            put(0xE0 | (cp >> 12));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
          } else {
            put(0xF0 | (cp >> 18));
            put(0x80 | ((cp >> 12) & 0x3F));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          return failed(error("bad escape"));
      }
    }
    return std::string_view(s, static_cast<size_t>(w - s));
  }

  // Skips any value without decoding it; returns its JSON text.
  Result<std::string_view> skip_value() {
    ws();
    char* start = p_;
    if (p_ >= end_) return failed(error("expected a value"));
    int depth = 0;
    do {
      ws();
      if (p_ >= end_) return failed(error("unexpected end"));
      char c = *p_;
      if (c == '"') {
        if (auto r = skip_string(); !r) return failed(r.error());
      } else if (c == '{' || c == '[') {
        if (++depth > kMaxDepth) return failed(error("nested too deep"));
        ++p_;
        continue;
      } else if (c == '}' || c == ']') {
        if (depth == 0) return failed(error("unexpected bracket"));
        --depth;
        ++p_;
      } else if (c == ',' || c == ':') {
        if (depth == 0) return failed(error("unexpected separator"));
        ++p_;
        continue;
      } else {
        char* q = p_;
        while (q < end_ && (std::isalnum(static_cast<unsigned char>(*q)) || *q == '-' ||
                            *q == '+' || *q == '.'))
          ++q;
        if (q == p_) return failed(error("unexpected character"));
        std::string_view word(p_, static_cast<size_t>(q - p_));
        if ((word.front() < '0' || word.front() > '9') && word.front() != '-' && word != "true" &&
            word != "false" && word != "null")
          return failed(error("unexpected word"));
        p_ = q;
      }
    } while (depth > 0);
    return std::string_view(start, static_cast<size_t>(p_ - start));
  }

  // Calls member(key) for each member of the object at p_; member must consume the value.
  template <class F>
  Result<void> object(F&& member) {
    if (!at('{')) return failed(error("expected an object"));
    ++p_;
    if (at('}')) {
      ++p_;
      return {};
    }
    for (;;) {
      auto key = string();
      if (!key) return failed(key.error());
      if (!at(':')) return failed(error("expected ':'"));
      ++p_;
      ws();
      if (auto r = member(*key); !r) return failed(r.error());
      if (at(',')) {
        ++p_;
        continue;
      }
      if (at('}')) {
        ++p_;
        return {};
      }
      return failed(error("expected ',' or '}'"));
    }
  }

  template <class F>
  Result<void> array(F&& element) {
    if (!at('[')) return failed(error("expected an array"));
    ++p_;
    if (at(']')) {
      ++p_;
      return {};
    }
    for (;;) {
      ws();
      if (auto r = element(); !r) return failed(r.error());
      if (at(',')) {
        ++p_;
        continue;
      }
      if (at(']')) {
        ++p_;
        return {};
      }
      return failed(error("expected ',' or ']'"));
    }
  }

  // A string member's value, or empty when the value is of another type (skipped).
  Result<std::string_view> string_or_skip() {
    if (at('"')) return string();
    auto r = skip_value();
    if (!r) return failed(r.error());
    return std::string_view();
  }

  void reset(char* p, char* e) {
    p_ = p;
    end_ = e;
  }
  bool done() {
    ws();
    return p_ == end_;
  }

 private:
  char* begin_;
  char* p_;
  char* end_;
};

Result<void> read_bash(Scanner& s, ToolPayload& out) {
  auto ok = s.object([&](std::string_view key) -> Result<void> {
    if (key == "stdout" || key == "stderr" || key == "persistedOutputPath") {
      if (!s.at('"')) {
        out.kind = OutputKind::Other;  // a shape of another kind: left alone
        auto r = s.skip_value();
        if (!r) return failed(r.error());
        return {};
      }
      auto v = s.string();
      if (!v) return failed(v.error());
      (key == "stdout"   ? out.stdout_text
       : key == "stderr" ? out.stderr_text
                         : out.persisted_path) = *v;
      return {};
    }
    auto raw = s.skip_value();
    if (!raw) return failed(raw.error());
    out.other_members.push_back({key, *raw});
    return {};
  });
  if (!ok) out.kind = OutputKind::Other;
  return ok;
}

Result<void> read_mcp(Scanner& s, ToolPayload& out) {
  auto ok = s.array([&]() -> Result<void> {
    std::string_view type, text;
    bool has_text = false;
    auto r = s.object([&](std::string_view key) -> Result<void> {
      if (key == "type" || key == "text") {
        auto v = s.string_or_skip();
        if (!v) return failed(v.error());
        if (key == "type") {
          type = *v;
        } else {
          text = *v;
          has_text = true;
        }
        return {};
      }
      auto raw = s.skip_value();
      if (!raw) return failed(raw.error());
      return {};
    });
    if (!r) return r;
    if (type != "text" || !has_text) out.kind = OutputKind::Other;
    out.texts.push_back(text);
    return {};
  });
  if (!ok || out.texts.empty()) out.kind = OutputKind::Other;
  return ok;
}

}  // namespace

bool cappable_tool(std::string_view tool_name) {
  if (tool_name == "Bash") return true;
  if (!tool_name.starts_with("mcp__")) return false;
  std::string_view server = tool_name.substr(5);
  return !server.starts_with("ctxkit-") && !server.starts_with("plugin_ctxkit_");
}

Result<ToolPayload> scan_tool_payload(char* data, size_t size) {
  Scanner s(data, size);
  ToolPayload out;
  std::string_view response;
  bool inline_read = false;
  auto r = s.object([&](std::string_view key) -> Result<void> {
    std::string_view* field = key == "hook_event_name" ? &out.hook_event_name
                              : key == "tool_name"     ? &out.tool_name
                              : key == "tool_use_id"   ? &out.tool_use_id
                              : key == "session_id"    ? &out.session_id
                              : key == "cwd"           ? &out.cwd
                              : key == "agent_id"      ? &out.agent_id
                                                       : nullptr;
    if (field) {
      auto v = s.string_or_skip();
      if (!v) return failed(v.error());
      *field = *v;
      return {};
    }
    if (key == "tool_response" && cappable_tool(out.tool_name) && !inline_read) {
      // The tool is named already (the client names it first): the output is read in this pass.
      const bool bash = out.tool_name == "Bash";
      if (s.at(bash ? '{' : '[')) {
        inline_read = true;
        out.kind = bash ? OutputKind::Bash : OutputKind::Mcp;
        return bash ? read_bash(s, out) : read_mcp(s, out);
      }
    }
    auto raw = s.skip_value();
    if (!raw) return failed(raw.error());
    if (key == "tool_response") response = *raw;
    return {};
  });
  if (!r) return failed(r.error());
  if (!s.done()) return failed(s.error("text after the payload's object"));
  if (inline_read || response.empty() || !cappable_tool(out.tool_name)) return out;
  char* rb = const_cast<char*>(response.data());
  Scanner inner = s;
  inner.reset(rb, rb + response.size());
  if (out.tool_name == "Bash" && response.front() == '{') {
    out.kind = OutputKind::Bash;
    (void)read_bash(inner, out);
  } else if (out.tool_name != "Bash" && response.front() == '[') {
    out.kind = OutputKind::Mcp;
    (void)read_mcp(inner, out);
  }
  return out;
}

std::string cap_response(const ToolPayload& payload, std::string_view preview) {
  std::string text =
      util::is_valid_utf8(preview) ? std::string(preview) : util::sanitize_json_text(preview);
  std::string out = R"({"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":)";
  if (payload.kind == OutputKind::Bash) {
    out += R"({"stdout":)";
    util::append_json_string(out, text);
    out += R"(,"stderr":"")";
    for (const auto& m : payload.other_members) {
      if (m.key == "persistedOutputSize") continue;
      out += ',';
      util::append_json_string(out, m.key);
      out += ':';
      out += m.raw;
    }
    out += '}';
  } else {
    out += R"([{"type":"text","text":)";
    util::append_json_string(out, text);
    out += "}]";
  }
  out += "}}";
  return out;
}

}  // namespace ctxkit::claude
