#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace ctxkit::claude {

// The text of one transcript line worth searching, and whose it is (role "" when the line has
// none): user prompts, assistant text, tool inputs ("<name> <input JSON>") and tool outputs.
struct MessageText {
  std::string role;  // user, assistant, tool_use, tool_result
  std::string timestamp;
  std::string text;
};

// Extracts message text with simdjson On-Demand (no document tree is built; the fields the text
// does not need are skipped). Nesting is followed to kMaxDepth levels of content blocks; deeper
// content is opaque (not searched) and never recursed into. A line that is not valid UTF-8 is
// repaired first. One extractor is reused for every line of a file.
class MessageTextExtractor {
 public:
  static constexpr int kMaxDepth = 16;

  MessageTextExtractor();
  ~MessageTextExtractor();
  MessageTextExtractor(const MessageTextExtractor&) = delete;
  MessageTextExtractor& operator=(const MessageTextExtractor&) = delete;

  // `capacity` bytes are readable from line.data() (at least line.size() + 64), as
  // util::LineReader guarantees; with capacity 0 the line is copied into a padded buffer.
  MessageText extract(std::string_view line, size_t capacity = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One line, with a throw-away extractor (for single lines; use MessageTextExtractor in loops).
MessageText message_text(std::string_view line);

}  // namespace ctxkit::claude
