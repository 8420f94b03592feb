#include "claude/hook_payload.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "claude/json_string_block.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ctxkit::claude {

namespace {
constexpr size_t kChunkBytes = 128 * 1024;
constexpr size_t kMaxKeyBytes = 64;  // longer keys are none of ours

// Index of the first byte of p[0, n) that ends a run of plain string content ('"', '\\' or a
// control character below 0x20), or n.
size_t find_string_special(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1F);
  for (; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                               _mm_cmpeq_epi8(_mm_min_epu8(x, control_max), x));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; i < n; ++i) {
    auto c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\' || c < 0x20) return i;
  }
  return n;
}

int hex_digit(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

constexpr uint32_t kReplacement = 0xFFFD;

// Where a decoded string goes: nowhere (a skipped value), or `text` up to `cap` bytes, with
// `overflow` set when more was there.
struct StringSink {
  std::string* text = nullptr;
  size_t cap = 0;
  bool overflow = false;
  uint32_t pending_high = 0;  // a high surrogate waiting for its low half

  void flush_pending() {
    if (pending_high != 0) {
      pending_high = 0;
      put_code_point(kReplacement);
    }
  }
  void put_bytes(const char* p, size_t n) {
    if (text == nullptr || n == 0) return;
    flush_pending();
    size_t room = cap - std::min(cap, text->size());
    if (n > room) overflow = true;
    text->append(p, std::min(n, room));
  }
  void put_code_point(uint32_t cp) {
    if (text == nullptr) return;
    std::string enc;
    append_utf8(enc, cp);
    size_t room = cap - std::min(cap, text->size());
    if (enc.size() > room) {
      overflow = true;
      return;
    }
    text->append(enc);
  }
  void put_unit(uint32_t u) {
    if (text == nullptr) return;
    if (u >= 0xD800 && u <= 0xDBFF) {
      flush_pending();
      pending_high = u;
    } else if (u >= 0xDC00 && u <= 0xDFFF) {
      if (pending_high != 0) {
        uint32_t cp = 0x10000 + ((pending_high - 0xD800) << 10) + (u - 0xDC00);
        pending_high = 0;
        put_code_point(cp);
      } else {
        put_code_point(kReplacement);
      }
    } else {
      flush_pending();
      put_code_point(u);
    }
  }
};

class Scanner {
 public:
  explicit Scanner(const ChunkSource& source) : source_(source) {}

  Result<HookPayload> run();

 private:
  const ChunkSource& source_;
  const char* buf_ = nullptr;  // the current chunk, [0, end_)
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t offset_ = 0;  // input offset of buf_[0]
  uint64_t line_ = 1;
  uint64_t line_start_ = 0;  // input offset where line_ starts
  std::optional<Error> error_;
  // The UTF-8 of the string being read, carried over chunks; set when a byte is not UTF-8
  // (pos_ is then at it).
  json_block::Utf8State utf8_;
  bool utf8_bad_ = false;

  bool refill() {
    if (eof_) return false;
    offset_ += end_;
    pos_ = end_ = 0;
    auto chunk = source_();
    if (!chunk) {
      error_ = chunk.error();
      eof_ = true;
      return false;
    }
    if (chunk->empty()) {
      eof_ = true;
      return false;
    }
    buf_ = chunk->data();
    end_ = chunk->size();
    return true;
  }
  int peek() {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int get() {
    int c = peek();
    if (c >= 0) ++pos_;
    return c;
  }

  // Records a syntax error at the current position (unless reading failed, which wins) and
  // returns false.
  bool fail(std::string_view what) {
    if (error_) return false;
    uint64_t at = offset_ + pos_;
    std::string_view why = what;
    if (pos_ == end_ && eof_) why = "unexpected end of input";
    error_ = Error{fmt::format("payload is not valid JSON: parse error at line {}, column {}: {}",
                               line_, at - line_start_ + 1, why),
                   Error::Kind::Invalid};
    return false;
  }

  void skip_ws() {
    while (true) {
      if (pos_ == end_ && !refill()) return;
      char c = buf_[pos_];
      if (c == '\n') {
        ++line_;
        line_start_ = offset_ + pos_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  bool expect(char c, std::string_view what) {
    if (peek() != static_cast<unsigned char>(c)) return fail(what);
    ++pos_;
    return true;
  }

  bool literal(std::string_view word) {
    for (char w : word) {
      if (peek() != static_cast<unsigned char>(w)) return fail("invalid literal");
      ++pos_;
    }
    return true;
  }

  static bool is_digit(int c) { return c >= '0' && c <= '9'; }

  bool number() {
    if (peek() == '-') ++pos_;
    int c = peek();
    if (c == '0') {
      ++pos_;
    } else if (c >= '1' && c <= '9') {
      while (is_digit(peek())) ++pos_;
    } else {
      return fail("invalid number");
    }
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek())) return fail("invalid number: expected a digit after '.'");
      while (is_digit(peek())) ++pos_;
    }
    c = peek();
    if (c == 'e' || c == 'E') {
      ++pos_;
      c = peek();
      if (c == '+' || c == '-') ++pos_;
      if (!is_digit(peek())) return fail("invalid number: expected a digit in the exponent");
      while (is_digit(peek())) ++pos_;
    }
    return true;
  }

  // One escape sequence at pos_ (its backslash), decoded into `sink`; reads across chunks.
  bool escape(StringSink& sink) {
    ++pos_;
    int e = peek();
    char decoded = 0;
    switch (e) {
      case '"':
        decoded = '"';
        break;
      case '\\':
        decoded = '\\';
        break;
      case '/':
        decoded = '/';
        break;
      case 'b':
        decoded = '\b';
        break;
      case 'f':
        decoded = '\f';
        break;
      case 'n':
        decoded = '\n';
        break;
      case 'r':
        decoded = '\r';
        break;
      case 't':
        decoded = '\t';
        break;
      case 'u': {
        ++pos_;
        uint32_t unit = 0;
        for (int k = 0; k < 4; ++k) {
          int h = hex_digit(peek());
          if (h < 0) return fail("invalid \\u escape: expected four hex digits");
          ++pos_;
          unit = unit * 16 + static_cast<uint32_t>(h);
        }
        sink.put_unit(unit);
        return true;
      }
      default:
        return fail("invalid escape in a string");
    }
    ++pos_;
    sink.put_bytes(&decoded, 1);
    return true;
  }

  static bool simple_escape(char c) {
    return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
           c == 't';
  }

  // Moves pos_ over plain content and well-formed escapes that lie whole in the chunk, without
  // decoding them (a skipped string): stops at a quote, a control character, an escape that
  // needs a closer look, or the chunk's end.
  void skip_plain_and_escapes() {
    const char* p = buf_ + pos_;
    const char* e = buf_ + end_;
    // A run of whole blocks first; where it ends, or when it found an ill-formed escape or
    // ill-formed UTF-8, block by block (json_string_block.hpp), which stops at what needs a closer
    // look. An escape that straddles a block is stepped over here and the next block starts
    // after it.
    json_block::RunEnd run = json_block::skip_run(p, e, utf8_);
    if (!run.careful) p = run.at;
    while (e - p >= static_cast<ptrdiff_t>(json_block::kBlock)) {
      size_t n = json_block::checked_prefix(p);
      if (!utf8_checked(p, n)) return;
      p += n;
      if (n == json_block::kBlock) continue;
      if (e - p < 6) break;
      size_t len = escape_length(p);
      if (len == 0 || !utf8_checked(p, 0, true)) {
        if (!utf8_bad_) pos_ = static_cast<size_t>(p - buf_);
        return;
      }
      p += len;
    }
    while (true) {
      const size_t n = find_string_special(p, static_cast<size_t>(e - p));
      if (!utf8_checked(p, n)) return;
      p += n;
      if (e - p < 6) break;
      size_t len = escape_length(p);
      if (len == 0) break;
      if (!utf8_checked(p, 0, true)) return;
      p += len;
    }
    pos_ = static_cast<size_t>(p - buf_);
  }

  // Checks the UTF-8 of p[0, n) (string content in this chunk), and with `ascii_next` that no
  // sequence is left unfinished before p[n], an escape or the string's end. At a byte that is not
  // UTF-8: pos_ there, utf8_bad_ set, false.
  bool utf8_checked(const char* p, size_t n, bool ascii_next = false) {
    size_t ok = json_block::utf8_scalar(p, n, utf8_);
    if (ok == n && !(ascii_next && utf8_.length != 0)) return true;
    pos_ = static_cast<size_t>(p + ok - buf_);
    utf8_bad_ = true;
    return false;
  }

  // The length of the well-formed escape at p (6 bytes readable), or 0 for anything else.
  static size_t escape_length(const char* p) {
    if (p[0] != '\\') return 0;
    if (simple_escape(p[1])) return 2;
    if (p[1] == 'u' && hex_digit(p[2]) >= 0 && hex_digit(p[3]) >= 0 && hex_digit(p[4]) >= 0 &&
        hex_digit(p[5]) >= 0)
      return 6;
    return 0;
  }

  // The rest of a string whose opening quote was consumed, into `sink`.
  bool string(StringSink& sink) {
    while (true) {
      if (pos_ == end_ && !refill()) return fail("unterminated string");
      if (sink.text == nullptr) {
        skip_plain_and_escapes();
      } else {
        size_t n = find_string_special(buf_ + pos_, end_ - pos_);
        if (utf8_checked(buf_ + pos_, n)) {
          sink.put_bytes(buf_ + pos_, n);
          pos_ += n;
        }
      }
      if (utf8_bad_) return fail("invalid UTF-8 in a string");
      if (pos_ == end_) continue;
      // A quote, a backslash or a control character: it may not cut a UTF-8 sequence.
      if (!utf8_checked(buf_ + pos_, 0, true)) return fail("invalid UTF-8 in a string");
      char c = buf_[pos_];
      if (c == '"') {
        ++pos_;
        sink.flush_pending();
        return true;
      }
      if (c != '\\') return fail("control character in a string (must be escaped)");
      if (!escape(sink)) return false;
    }
  }

  bool skip_string() {
    StringSink none;
    return string(none);
  }

  // One value of any kind, checked and dropped; nesting is tracked on a bounded explicit stack.
  bool skip_value() {
    std::vector<bool> in_object;  // one entry per open container: object (true) or array
    while (true) {
      // A value starts here.
      skip_ws();
      switch (peek()) {
        case '{':
        case '[': {
          bool object = peek() == '{';
          ++pos_;
          skip_ws();
          if (peek() == (object ? '}' : ']')) {
            ++pos_;
            break;
          }
          if (in_object.size() >= kMaxHookPayloadDepth) return fail("nesting too deep");
          in_object.push_back(object);
          if (object) {
            if (!expect('"', "expected a string key") || !skip_string()) return false;
            skip_ws();
            if (!expect(':', "expected ':' after a key")) return false;
          }
          continue;
        }
        case '"':
          ++pos_;
          if (!skip_string()) return false;
          break;
        case 't':
          if (!literal("true")) return false;
          break;
        case 'f':
          if (!literal("false")) return false;
          break;
        case 'n':
          if (!literal("null")) return false;
          break;
        default:
          if (peek() != '-' && !is_digit(peek())) return fail("expected a value");
          if (!number()) return false;
          break;
      }
      // A value ended: close containers or move to the next member or element.
      while (true) {
        if (in_object.empty()) return true;
        skip_ws();
        bool object = in_object.back();
        int c = peek();
        if (c == ',') {
          ++pos_;
          if (object) {
            skip_ws();
            if (!expect('"', "expected a string key") || !skip_string()) return false;
            skip_ws();
            if (!expect(':', "expected ':' after a key")) return false;
          }
          break;
        }
        if (c == (object ? '}' : ']')) {
          ++pos_;
          in_object.pop_back();
          continue;
        }
        return fail(object ? "expected ',' or '}' after a value"
                           : "expected ',' or ']' after a value");
      }
    }
  }

  std::string* string_field(HookPayload& p, std::string_view key) {
    if (key == "session_id") return &p.session_id;
    if (key == "transcript_path") return &p.transcript_path;
    if (key == "cwd") return &p.cwd;
    if (key == "hook_event_name") return &p.hook_event_name;
    if (key == "tool_name") return &p.tool_name;
    if (key == "tool_use_id") return &p.tool_use_id;
    if (key == "agent_id") return &p.agent_id;
    if (key == "agent_type") return &p.agent_type;
    if (key == "source") return &p.source;
    if (key == "reason") return &p.reason;
    return nullptr;
  }

  bool member(HookPayload& p) {
    if (!expect('"', "expected a string key")) return false;
    std::string key;
    StringSink key_sink{&key, kMaxKeyBytes};
    if (!string(key_sink)) return false;
    skip_ws();
    if (!expect(':', "expected ':' after a key")) return false;
    skip_ws();
    if (key_sink.overflow) return skip_value();
    if (std::string* field = string_field(p, key)) {
      field->clear();
      if (peek() != '"') return skip_value();
      ++pos_;
      StringSink sink{field, kMaxHookFieldBytes};
      if (!string(sink)) return false;
      if (sink.overflow) {
        error_ = Error{
            fmt::format("payload field '{}' is longer than {} bytes", key, kMaxHookFieldBytes),
            Error::Kind::Invalid};
        return false;
      }
      return true;
    }
    if (key == "stop_hook_active") {
      p.stop_hook_active = false;
      if (peek() == 't') {
        if (!literal("true")) return false;
        p.stop_hook_active = true;
        return true;
      }
    }
    return skip_value();
  }

  bool object(HookPayload& p) {
    ++pos_;  // '{'
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      if (!member(p)) return false;
      skip_ws();
      int c = peek();
      if (c == ',') {
        ++pos_;
        skip_ws();
        continue;
      }
      if (c == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}' after a value");
    }
  }

  bool at_end() {
    skip_ws();
    if (peek() != -1) return fail("unexpected data after the payload");
    return !error_;
  }
};

Result<HookPayload> validate(HookPayload p) {
  if (p.transcript_path.empty())
    return fail("payload has no transcript_path", Error::Kind::Invalid);
  if (p.session_id.empty()) return fail("payload has no session_id", Error::Kind::Invalid);
  if (p.agent_id.find('/') != std::string::npos || p.agent_id.find("..") != std::string::npos)
    return fail(fmt::format("payload has an invalid agent_id '{}'", p.agent_id),
                Error::Kind::Invalid);
  return p;
}

Result<HookPayload> Scanner::run() {
  skip_ws();
  int c = peek();
  if (c == -1) {
    if (error_) return std::unexpected(*error_);
    return ctxkit::fail("no hook payload on stdin (empty input)", Error::Kind::Invalid);
  }
  HookPayload p;
  if (c != '{') {
    // Any other JSON value is checked first, so that text that is not JSON says so.
    if (!skip_value() || !at_end()) return std::unexpected(*error_);
    return ctxkit::fail("payload is not a JSON object", Error::Kind::Invalid);
  }
  if (!object(p) || !at_end()) return std::unexpected(*error_);
  return validate(std::move(p));
}
}  // namespace

std::filesystem::path HookPayload::context_transcript() const {
  std::filesystem::path main(transcript_path);
  if (agent_id.empty()) return main;
  return main.parent_path() / main.stem() / "subagents" / fmt::format("agent-{}.jsonl", agent_id);
}

Result<HookPayload> scan_hook_payload_chunks(const ChunkSource& source) {
  Scanner scanner(source);
  return scanner.run();
}

Result<HookPayload> scan_hook_payload(const ByteSource& source) {
  auto buf = std::make_unique_for_overwrite<char[]>(kChunkBytes);
  ChunkSource chunks = [&]() -> Result<std::string_view> {
    auto n = source(buf.get(), kChunkBytes);
    if (!n) return std::unexpected(n.error());
    return std::string_view(buf.get(), std::min(*n, kChunkBytes));
  };
  return scan_hook_payload_chunks(chunks);
}

Result<HookPayload> parse_hook_payload(std::string_view text) {
  size_t at = 0;
  ByteSource from_text = [&](char* buf, size_t cap) -> Result<size_t> {
    size_t n = std::min(cap, text.size() - at);
    std::copy_n(text.data() + at, n, buf);
    at += n;
    return n;
  };
  return scan_hook_payload(from_text);
}

}  // namespace ctxkit::claude
