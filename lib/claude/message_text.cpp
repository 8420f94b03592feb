#include "claude/message_text.hpp"

#include <simdjson.h>

#include "util/utf8.hpp"

namespace ctxkit::claude {

namespace od = simdjson::ondemand;

namespace {

void append_piece(std::string& out, std::string_view piece) {
  if (piece.empty()) return;
  if (!out.empty()) out += '\n';
  out.append(piece);
}

// The text of a JSON value as JSON (a tool's input): its bytes in the line, never parsed deeper.
bool raw_text(od::value& v, std::string_view& out) {
  od::json_type t;
  if (v.type().get(t)) return false;
  if (t == od::json_type::object) {
    od::object o;
    return !v.get_object().get(o) && !o.raw_json().get(out);
  }
  if (t == od::json_type::array) {
    od::array a;
    return !v.get_array().get(a) && !a.raw_json().get(out);
  }
  out = v.raw_json_token();
  while (!out.empty() &&
         (out.back() == ' ' || out.back() == '\n' || out.back() == '\r' || out.back() == '\t'))
    out.remove_suffix(1);
  return true;
}

// Appends the text of a message content (a string, or an array of blocks) to `out`. `first` gets
// the type of the first block. Content nested deeper than kMaxDepth is skipped unread.
bool content_text(od::value& v, int depth, std::string& out, std::string* first) {
  od::json_type t;
  if (v.type().get(t)) return false;
  if (t == od::json_type::string) {
    std::string_view s;
    if (v.get_string().get(s)) return false;
    append_piece(out, s);
    return true;
  }
  if (t != od::json_type::array || depth >= MessageTextExtractor::kMaxDepth) return true;  // opaque
  od::array arr;
  if (v.get_array().get(arr)) return false;
  bool is_first = true;
  for (auto er : arr) {
    od::value e;
    if (std::move(er).get(e)) return false;
    od::json_type et;
    if (e.type().get(et)) return false;
    if (et != od::json_type::object) continue;
    od::object b;
    if (e.get_object().get(b)) return false;
    std::string type, text, name, input, nested;
    for (auto fr : b) {
      od::field f;
      if (std::move(fr).get(f)) return false;
      std::string_view key;
      if (f.unescaped_key().get(key)) return false;
      od::value& fv = f.value();
      if (key == "type") {
        std::string_view s;
        if (!fv.get_string().get(s)) type = s;
      } else if (key == "text") {
        std::string_view s;
        if (!fv.get_string().get(s)) text = s;
      } else if (key == "name") {
        std::string_view s;
        if (!fv.get_string().get(s)) name = s;
      } else if (key == "input") {
        std::string_view s;
        if (!raw_text(fv, s)) return false;
        input = s;
      } else if (key == "content") {
        if (!content_text(fv, depth + 1, nested, nullptr)) return false;
      }
    }
    if (is_first && first) *first = type;
    is_first = false;
    if (type == "text")
      append_piece(out, text);
    else if (type == "tool_use" && !input.empty())
      append_piece(out, name + " " + input);
    else if (type == "tool_result")
      append_piece(out, nested);
  }
  return true;
}

}  // namespace

struct MessageTextExtractor::Impl {
  od::parser parser;
  std::string padded;

  // False when the line cannot be read as JSON (`error` tells whether it was its UTF-8).
  bool walk(std::string_view line, size_t capacity, MessageText& m, bool& bad_utf8) {
    od::document doc;
    auto err =
        parser.iterate(simdjson::padded_string_view(line.data(), line.size(), capacity)).get(doc);
    if (err) {
      bad_utf8 = err == simdjson::UTF8_ERROR;
      return false;
    }
    od::object obj;
    if (auto e = doc.get_object().get(obj)) {
      bad_utf8 = e == simdjson::UTF8_ERROR;
      return false;
    }
    std::string type, first;
    std::string text;
    for (auto fr : obj) {
      od::field f;
      if (auto e = std::move(fr).get(f)) {
        bad_utf8 = e == simdjson::UTF8_ERROR;
        return false;
      }
      std::string_view key;
      if (f.unescaped_key().get(key)) return false;
      if (key == "type") {
        std::string_view s;
        if (!f.value().get_string().get(s)) type = s;
      } else if (key == "timestamp") {
        std::string_view s;
        if (!f.value().get_string().get(s)) m.timestamp = s;
      } else if (key == "message") {
        od::object msg;
        if (f.value().get_object().get(msg)) continue;
        for (auto mr : msg) {
          od::field mf;
          if (std::move(mr).get(mf)) return false;
          std::string_view mk;
          if (mf.unescaped_key().get(mk)) return false;
          if (mk == "content" && !content_text(mf.value(), 0, text, &first)) return false;
        }
      }
    }
    if (type != "user" && type != "assistant") {
      m = {};
      return true;
    }
    m.text = std::move(text);
    m.role = first == "tool_result" || first == "tool_use" ? first : type;
    return true;
  }

  MessageText extract(std::string_view line, size_t capacity) {
    MessageText m;
    // Lines that cannot hold a message are not parsed at all.
    if (line.find("\"message\"") == std::string_view::npos) return m;
    bool bad_utf8 = false;
    if (capacity < line.size() + simdjson::SIMDJSON_PADDING) {
      padded.assign(line);
      padded.append(simdjson::SIMDJSON_PADDING, '\0');
      line = std::string_view(padded.data(), line.size());
      capacity = padded.size();
    }
    if (walk(line, capacity, m, bad_utf8)) return m;
    m = {};
    if (!bad_utf8) return m;
    std::string repaired = util::sanitize_json_text(line);
    repaired.append(simdjson::SIMDJSON_PADDING, '\0');
    std::string_view r(repaired.data(), repaired.size() - simdjson::SIMDJSON_PADDING);
    if (!walk(r, repaired.size(), m, bad_utf8)) m = {};
    return m;
  }
};

MessageTextExtractor::MessageTextExtractor() : impl_(std::make_unique<Impl>()) {}
MessageTextExtractor::~MessageTextExtractor() = default;

MessageText MessageTextExtractor::extract(std::string_view line, size_t capacity) {
  return impl_->extract(line, capacity);
}

MessageText message_text(std::string_view line) {
  MessageTextExtractor x;
  return x.extract(line);
}

}  // namespace ctxkit::claude
