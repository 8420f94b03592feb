#pragma once

// Transcripts in the client's line shapes (key order and fields of the recorded 2.1.332 lines),
// for the report's unit and end-to-end tests.

#include <fmt/core.h>

#include <cstdint>
#include <string>

#include "util/time.hpp"

namespace ctxkit::test {

class TranscriptBuilder {
 public:
  explicit TranscriptBuilder(std::string session = "5d1c2a40-0000-4000-8000-00000000a001",
                             std::string start = "2026-11-25T10:00:00.000Z")
      : session_(std::move(session)), t0_(util::parse_iso8601_ms(start).value_or(0)) {}

  std::string model = "claude-opus-4-8";
  std::string version = "2.1.332";
  std::string cwd = "/home/user/proj";

  // A user prompt `at_s` seconds after the start.
  TranscriptBuilder& user(int64_t at_s, const std::string& text = "go") {
    add(fmt::format(
        R"({{"parentUuid":null,"isSidechain":false,"type":"user","message":{{"role":"user","content":"{}"}},"uuid":"u{}","timestamp":"{}","userType":"external","cwd":"{}","sessionId":"{}","version":"{}"}})",
        text, lines_ + 1, ts(at_s), cwd, session_, version));
    return *this;
  }
  // A response whose usage counts `tokens` of context, written as `blocks` lines that share
  // message.id and usage (as the client writes one line per content block).
  TranscriptBuilder& response(int64_t at_s, int64_t tokens, int blocks = 1,
                              bool sidechain = false) {
    ++messages_;
    for (int b = 0; b < blocks; ++b)
      add(fmt::format(
          R"({{"parentUuid":"p","isSidechain":{},"message":{{"id":"msg_{:04}","type":"message","role":"assistant","model":"{}","content":[{{"type":"text","text":"step"}}],"stop_reason":"tool_use","usage":{{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":{},"output_tokens":20}}}},"type":"assistant","uuid":"a{}","timestamp":"{}","userType":"external","cwd":"{}","sessionId":"{}","version":"{}"}})",
          sidechain ? "true" : "false", messages_, model, tokens - 105, lines_ + 1, ts(at_s), cwd,
          session_, version));
    return *this;
  }
  // An automatic compaction: tokens before and after.
  TranscriptBuilder& compaction(int64_t at_s, int64_t pre, int64_t post) {
    add(fmt::format(
        R"({{"parentUuid":null,"isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","level":"info","compactMetadata":{{"trigger":"auto","preTokens":{},"postTokens":{}}},"uuid":"c{}","timestamp":"{}","userType":"external","cwd":"{}","sessionId":"{}","version":"{}"}})",
        pre, post, lines_ + 1, ts(at_s), cwd, session_, version));
    return *this;
  }
  // The additional context of a PostToolUse hook (where ctx-remind's reminders reach the model).
  TranscriptBuilder& hook_context(int64_t at_s, const std::string& json_string_text) {
    add(fmt::format(
        R"({{"parentUuid":"p","isSidechain":false,"attachment":{{"type":"hook_additional_context","content":["{}"],"hookName":"PostToolUse:Bash","toolUseID":"toolu_{}","hookEvent":"PostToolUse"}},"type":"attachment","uuid":"h{}","timestamp":"{}","userType":"external","cwd":"{}","sessionId":"{}","version":"{}"}})",
        json_string_text, lines_ + 1, lines_ + 1, ts(at_s), cwd, session_, version));
    return *this;
  }
  // Any line as it is.
  TranscriptBuilder& raw(const std::string& line) {
    add(line);
    return *this;
  }

  const std::string& text() const { return text_; }
  uint64_t lines() const { return lines_; }
  const std::string& session() const { return session_; }
  std::string ts(int64_t at_s) const { return util::format_iso8601_ms(t0_ + at_s * 1000); }
  int64_t at_ms(int64_t at_s) const { return t0_ + at_s * 1000; }

 private:
  void add(const std::string& line) {
    text_ += line;
    text_ += '\n';
    ++lines_;
  }
  std::string session_;
  int64_t t0_ = 0;
  std::string text_;
  uint64_t lines_ = 0;
  int messages_ = 0;
};

}  // namespace ctxkit::test
