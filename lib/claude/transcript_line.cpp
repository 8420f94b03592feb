#include "claude/transcript_line.hpp"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/utf8.hpp"

namespace ctxkit::claude {

namespace {
using json = nlohmann::json;

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// A token count: a non-negative integer, held at INT64_MAX; anything else counts 0.
int64_t count_of(int64_t v) {
  return std::max<int64_t>(v, 0);
}

// Reads the meter's fields from the parser's events, building no JSON value: text, tool inputs
// and outputs pass by as events and are dropped. A key seen again replaces what its first
// occurrence gave (as a parsed object would), and a value of the wrong type gives nothing.
class MeterFields : public nlohmann::json_sax<json> {
 public:
  TranscriptLine line;
  bool root_is_object = false;

  bool null() override { return true; }
  bool boolean(bool v) override {
    if (bool* b = bool_slot()) *b = v;
    return true;
  }
  bool number_integer(number_integer_t v) override { return number(count_of(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(util::sat_from_unsigned(v)); }
  bool number_float(number_float_t, const string_t&) override { return number(0); }
  bool string(string_t& v) override {
    if (std::string* s = string_slot()) *s = std::move(v);
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    frames_.back().key = std::move(k);
    forget();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // What a container is to the meter.
  enum class Role { Other, Root, Message, Usage, Content, Block, Compact };
  struct Frame {
    Role role = Role::Other;
    std::string key;  // the current member's key (objects)
  };
  std::vector<Frame> frames_;
  std::string block_type_, block_id_;  // of the message.content block being read

  // Clears what the current member held before: a repeated key starts afresh.
  void forget() {
    if (std::string* s = string_slot()) {
      s->clear();
    } else if (bool* b = bool_slot()) {
      *b = false;
    } else if (int64_t* n = usage_slot()) {
      *n = 0;
    } else {
      const Frame& f = frames_.back();
      if (f.role == Role::Root && f.key == "message") {
        line.model.clear();
        line.message_id.clear();
        line.usage.reset();
        line.tool_use_ids.clear();
      } else if ((f.role == Role::Root && f.key == "compactMetadata") ||
                 (f.role == Role::Compact && f.key == "postTokens")) {
        line.compact_post_tokens.reset();
        if (f.role == Role::Root) line.compact_pre_tokens.reset();
      } else if (f.role == Role::Compact && f.key == "preTokens") {
        line.compact_pre_tokens.reset();
      } else if (f.role == Role::Message && f.key == "usage") {
        line.usage.reset();
      } else if (f.role == Role::Message && f.key == "content") {
        line.tool_use_ids.clear();
      }
    }
  }

  // Where the current member's value goes, by its type; nullptr when the meter does not read it.
  std::string* string_slot() {
    if (frames_.empty()) return nullptr;
    const Frame& f = frames_.back();
    const std::string& k = f.key;
    switch (f.role) {
      case Role::Root:
        if (k == "type") return &line.type;
        if (k == "subtype") return &line.subtype;
        if (k == "timestamp") return &line.timestamp;
        if (k == "version") return &line.version;
        return nullptr;
      case Role::Message:
        if (k == "model") return &line.model;
        if (k == "id") return &line.message_id;
        return nullptr;
      case Role::Block:
        if (k == "type") return &block_type_;
        if (k == "id") return &block_id_;
        return nullptr;
      default:
        return nullptr;
    }
  }

  bool* bool_slot() {
    if (frames_.empty() || frames_.back().role != Role::Root) return nullptr;
    const std::string& k = frames_.back().key;
    if (k == "isSidechain") return &line.is_sidechain;
    if (k == "isApiErrorMessage") return &line.is_api_error;
    return nullptr;
  }

  int64_t* usage_slot() {
    if (frames_.empty() || frames_.back().role != Role::Usage || !line.usage) return nullptr;
    const std::string& k = frames_.back().key;
    if (k == "input_tokens") return &line.usage->input_tokens;
    if (k == "cache_creation_input_tokens") return &line.usage->cache_creation_input_tokens;
    if (k == "cache_read_input_tokens") return &line.usage->cache_read_input_tokens;
    return nullptr;
  }

  bool number(int64_t v) {
    if (int64_t* n = usage_slot()) {
      *n = v;
    } else if (!frames_.empty() && frames_.back().role == Role::Compact &&
               frames_.back().key == "postTokens") {
      line.compact_post_tokens = v;
    } else if (!frames_.empty() && frames_.back().role == Role::Compact &&
               frames_.back().key == "preTokens") {
      line.compact_pre_tokens = v;
    }
    return true;
  }

  bool open(bool object) {
    Role role = Role::Other;
    if (frames_.empty()) {
      root_is_object = object;
      role = object ? Role::Root : Role::Other;
    } else {
      const Frame& parent = frames_.back();
      const std::string& k = parent.key;
      if (parent.role == Role::Root && object && k == "message") {
        role = Role::Message;
      } else if (parent.role == Role::Root && object && k == "compactMetadata") {
        role = Role::Compact;
      } else if (parent.role == Role::Message && object && k == "usage") {
        role = Role::Usage;
        line.usage = Usage{};
      } else if (parent.role == Role::Message && !object && k == "content") {
        role = Role::Content;
      } else if (parent.role == Role::Content && object) {
        role = Role::Block;
        block_type_.clear();
        block_id_.clear();
      }
    }
    frames_.push_back(Frame{role, {}});
    return true;
  }

  bool close() {
    if (frames_.back().role == Role::Block && block_type_ == "tool_use" && !block_id_.empty())
      line.tool_use_ids.push_back(std::move(block_id_));
    frames_.pop_back();
    return true;
  }
};

// The meter's fields of `line`, or nullopt when it is not valid JSON.
std::optional<MeterFields> read_fields(std::string_view line) {
  MeterFields f;
  if (json::sax_parse(line.begin(), line.end(), &f)) return f;
  return std::nullopt;
}
}  // namespace

bool may_matter_for_meter(std::string_view line) {
  return contains(line, "\"assistant\"") || contains(line, "\"compact_boundary\"");
}

Result<TranscriptLine> parse_transcript_line(std::string_view line) {
  auto fields = read_fields(line);
  // Ill-formed UTF-8 inside a string: read again with it replaced.
  if (!fields) fields = read_fields(util::sanitize_json_text(line));
  if (!fields) return fail("not valid JSON", Error::Kind::Invalid);
  if (!fields->root_is_object) return fail("not a JSON object", Error::Kind::Invalid);
  return std::move(fields->line);
}

}  // namespace ctxkit::claude
