#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "claude/hook_payload.hpp"
#include "unit/json_variants.hpp"
#include "unit/recorded_cases.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
using json = nlohmann::json;

// Every recorded version and model, each payload as recorded and rewritten (keys reversed,
// spaced, unknown keys added at every depth).
using test::Recorded;
using test::recorded;
using test::recorded_name;

class RecordedHookPayloads : public ::testing::TestWithParam<Recorded> {
 protected:
  std::string text_of(const json& payload) const {
    return GetParam().variant ? test::json_variant(payload.dump(), *GetParam().variant)
                              : payload.dump();
  }
};

TEST_P(RecordedHookPayloads, EveryPostToolUsePayloadIsRead) {
  json all =
      json::parse(test::read_file(test::fixture_path(GetParam().set, "hooks/PostToolUse.json")));
  ASSERT_FALSE(all["payloads"].empty());
  int subagent = 0;
  for (const auto& p : all["payloads"]) {
    auto parsed = parse_hook_payload(text_of(p));
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->hook_event_name, "PostToolUse");
    EXPECT_EQ(parsed->session_id, p["session_id"]);
    EXPECT_EQ(parsed->transcript_path, p["transcript_path"]);
    EXPECT_EQ(parsed->cwd, p["cwd"]);
    EXPECT_EQ(parsed->tool_name, p["tool_name"]);
    EXPECT_EQ(parsed->tool_use_id, p["tool_use_id"]);
    EXPECT_EQ(parsed->agent_id, p.value("agent_id", ""));
    if (!parsed->agent_id.empty()) ++subagent;
  }
  EXPECT_GE(subagent, 1) << "the recorded run calls a tool inside a subagent";
}

// Every event the client sent: the fields every hook reads.
TEST_P(RecordedHookPayloads, EveryEventsPayloadIsRead) {
  int events = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(test::fixture_path(GetParam().set, "hooks"))) {
    json all = json::parse(test::read_file(e.path()));
    if (all["event"] == "StatusLine")
      continue;  // not a hook: ctx-status reads it (test_status_e2e)
    ++events;
    for (const auto& p : all["payloads"]) {
      auto parsed = parse_hook_payload(text_of(p));
      ASSERT_TRUE(parsed) << e.path() << ": " << parsed.error().message;
      EXPECT_EQ(parsed->hook_event_name, all["event"]) << e.path();
      EXPECT_EQ(parsed->session_id, p["session_id"]) << e.path();
      EXPECT_EQ(parsed->source, p.value("source", "")) << e.path();
      EXPECT_EQ(parsed->stop_hook_active, p.value("stop_hook_active", false)) << e.path();
    }
  }
  EXPECT_GE(events, 5);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedHookPayloads,
                         ::testing::ValuesIn(recorded("hooks/PostToolUse.json")), recorded_name);

TEST(HookPayload, SubagentPayloadPointsAtTheSubagentsOwnFile) {
  auto p = parse_hook_payload(
      R"({"session_id":"S","transcript_path":"/h/.claude/projects/-p/S.jsonl","cwd":"/p","hook_event_name":"PostToolUse","agent_id":"a12","agent_type":"general-purpose"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context_transcript(), "/h/.claude/projects/-p/S/subagents/agent-a12.jsonl");
}

TEST(HookPayload, ErrorsAreOneLine) {
  EXPECT_EQ(parse_hook_payload("").error().message, "no hook payload on stdin (empty input)");
  EXPECT_EQ(parse_hook_payload("  \n").error().message, "no hook payload on stdin (empty input)");
  EXPECT_EQ(parse_hook_payload("[1,2]").error().message, "payload is not a JSON object");
  EXPECT_EQ(parse_hook_payload(R"({"session_id":"S"})").error().message,
            "payload has no transcript_path");
  auto bad = parse_hook_payload("{nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "payload is not valid JSON: parse error at line 1, column 2: expected a string key");
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(parse_hook_payload(R"({"session_id":"S","transcript_path":"/t","agent_id":"../x"})")
                .error()
                .message,
            "payload has an invalid agent_id '../x'");
}

// A lone surrogate's escape is valid JSON (its decoding is the replacement character); bytes that
// are not UTF-8 are not JSON at all (RFC 8259 8.1).
TEST(HookPayload, LoneSurrogateEscapesAreToleratedBytesThatAreNotUtf8AreNot) {
  std::string text =
      "{\"session_id\":\"S\",\"transcript_path\":\"/t.jsonl\",\"hook_event_name\":\"PostToolUse\","
      "\"tool_response\":{\"stdout\":\"\\ud800 alone\"},\"tool_use_id\":\"toolu_1\"}";
  auto p = parse_hook_payload(text);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tool_use_id, "toolu_1");
  text.replace(text.find("\\ud800"), 6, "\xc3\x28");
  EXPECT_EQ(parse_hook_payload(text).error().message,
            "payload is not valid JSON: parse error at line 1, column 108: invalid UTF-8 in a "
            "string");
}

TEST(HookPayload, UnknownFieldsAreIgnored) {
  auto p = parse_hook_payload(
      R"({"session_id":"S","transcript_path":"/t","future_field":{"x":[1,2,{"y":null}]},"hook_event_name":"PostToolUse"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->hook_event_name, "PostToolUse");
}

// Serves `text` in chunks of `chunk` bytes, so that every token can straddle a boundary.
ByteSource chunks_of(const std::string& text, size_t chunk) {
  auto at = std::make_shared<size_t>(0);
  return [&text, chunk, at](char* buf, size_t cap) -> Result<size_t> {
    size_t n = std::min({chunk, cap, text.size() - *at});
    std::copy_n(text.data() + *at, n, buf);
    *at += n;
    return n;
  };
}

std::string error_of(std::string_view text) {
  auto p = parse_hook_payload(text);
  return p ? std::string("accepted") : p.error().message;
}

constexpr std::string_view kHead = R"({"session_id":"S","transcript_path":"/t.jsonl",)";

TEST(HookPayloadScan, SameResultWhateverTheChunkSize) {
  std::string text =
      std::string(kHead) +
      R"("tool_input":{"a":[1,-2.5e+3,true,false,null,{"k\"ey":"v\\al"}],"b":"x\u00e9y"},)"
      R"("cwd":"/p/\u00e9\ud83d\ude00","hook_event_name":"PostToolUse","tool_use_id":"toolu_9"})";
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{1} << 20}) {
    auto p = scan_hook_payload(chunks_of(text, chunk));
    ASSERT_TRUE(p) << chunk << ": " << p.error().message;
    EXPECT_EQ(p->cwd, "/p/\xc3\xa9\xf0\x9f\x98\x80") << chunk;
    EXPECT_EQ(p->tool_use_id, "toolu_9");
    EXPECT_EQ(p->hook_event_name, "PostToolUse");
  }
}

TEST(HookPayloadScan, EscapesInKeysAndValuesAreDecoded) {
  auto p = parse_hook_payload(
      R"({"session\u005fid":"a\"b\\c\/d\b\f\n\r\t","transcript_path":"/t","c\u0077d":"x"})");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->session_id, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(p->cwd, "x");
}

TEST(HookPayloadScan, SurrogatePairsCombineAndLoneHalvesBecomeReplacementCharacters) {
  auto p = parse_hook_payload(
      std::string(kHead) +
      R"("cwd":"\uD83D\uDE00|\ud800|\udc00|\ud800\ud83d\ude00|\ud800x|\ud800\n"})");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->cwd,
            "\xf0\x9f\x98\x80|\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd\xf0\x9f\x98\x80|\xef\xbf\xbdx|"
            "\xef\xbf\xbd\n");
  // A lone surrogate at the very end of a kept string.
  auto q = parse_hook_payload(std::string(kHead) + R"("cwd":"a\ud83d"})");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->cwd, "a\xef\xbf\xbd");
}

TEST(HookPayloadScan, DuplicateKeysTheLastOneWins) {
  auto p = parse_hook_payload(std::string(kHead) +
                              R"("cwd":"/first","cwd":"/second","tool_name":"X","tool_name":7,)"
                              R"("stop_hook_active":true,"stop_hook_active":false})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cwd, "/second");
  EXPECT_EQ(p->tool_name, "");
  EXPECT_FALSE(p->stop_hook_active);
  auto q = parse_hook_payload(std::string(kHead) + R"("stop_hook_active":true})");
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->stop_hook_active);
}

TEST(HookPayloadScan, DeepNestingInASkippedValueIsSkippedWithoutRecursion) {
  std::string deep = std::string(kHead) + R"("tool_input":)";
  for (int i = 0; i < 200000; ++i) deep += i % 2 ? R"({"k":)" : "[";
  deep += "0";
  for (int i = 200000 - 1; i >= 0; --i) deep += i % 2 ? "}" : "]";
  deep += R"(,"cwd":"/p"})";
  auto p = parse_hook_payload(deep);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->cwd, "/p");
  // Unbalanced at depth: an error, not a crash.
  std::string open(500000, '[');
  EXPECT_EQ(error_of(std::string(kHead) + R"("x":)" + open + "}").substr(0, 47),
            "payload is not valid JSON: parse error at line ");
}

TEST(HookPayloadScan, NestingBeyondTheBoundIsRefused) {
  std::string text =
      std::string(kHead) + R"("x":)" + std::string(kMaxHookPayloadDepth + 1, '[') + "0";
  // The error points at the value that would open one level too many.
  EXPECT_EQ(
      error_of(text),
      fmt::format("payload is not valid JSON: parse error at line 1, column {}: nesting too deep",
                  kHead.size() + 4 + kMaxHookPayloadDepth + 2));
}

TEST(HookPayloadScan, TruncatedInputIsAnErrorAtItsEnd) {
  std::string whole =
      std::string(kHead) + R"("tool_input":{"a":[1,"two\u00e9",{"b":null}]},"cwd":"/p"})";
  for (size_t n = 1; n < whole.size(); ++n) {
    std::string cut = whole.substr(0, n);
    auto p = parse_hook_payload(cut);
    ASSERT_FALSE(p) << cut;
    EXPECT_NE(p.error().message.find("unexpected end of input"), std::string::npos)
        << cut << " -> " << p.error().message;
  }
}

TEST(HookPayloadScan, StrictAboutWhatItAccepts) {
  std::string h(kHead);
  EXPECT_EQ(error_of(h + "\"x\":01}"),
            "payload is not valid JSON: parse error at line 1, column 53: expected ',' or '}' "
            "after a value");
  EXPECT_EQ(error_of(h + "\"x\":1.}"),
            "payload is not valid JSON: parse error at line 1, column 54: invalid number: expected "
            "a digit after '.'");
  EXPECT_EQ(error_of(h + "\"x\":tru}"),
            "payload is not valid JSON: parse error at line 1, column 55: invalid literal");
  EXPECT_EQ(
      error_of(h + "\"x\":\"\\x\"}"),
      "payload is not valid JSON: parse error at line 1, column 54: invalid escape in a string");
  EXPECT_EQ(error_of(h + "\"x\":\"\\u12g4\"}"),
            "payload is not valid JSON: parse error at line 1, column 57: invalid \\u escape: "
            "expected four hex digits");
  EXPECT_EQ(error_of(h + "\"x\":[1,]}"),
            "payload is not valid JSON: parse error at line 1, column 55: expected a value");
  EXPECT_EQ(error_of(h + "\"x\":{\"a\":1,}}"),
            "payload is not valid JSON: parse error at line 1, column 59: expected a string key");
  EXPECT_EQ(error_of(h + "\"x\":1,}"),
            "payload is not valid JSON: parse error at line 1, column 54: expected a string key");
  EXPECT_EQ(
      error_of(h + "\"x\" 1}"),
      "payload is not valid JSON: parse error at line 1, column 52: expected ':' after a key");
  EXPECT_EQ(error_of(h + "\"x\":1} {}"),
            "payload is not valid JSON: parse error at line 1, column 55: unexpected data after "
            "the payload");
  EXPECT_EQ(error_of("{\n  \"a\":\n  @}"),
            "payload is not valid JSON: parse error at line 3, column 3: expected a value");
}

TEST(HookPayloadScan, NulBytesAndRawControlCharactersAreRefused) {
  std::string h(kHead);
  EXPECT_EQ(error_of(h + std::string("\"x\":\"a\0b\"}", 10)),
            "payload is not valid JSON: parse error at line 1, column 54: control character in a "
            "string (must be escaped)");
  EXPECT_EQ(error_of(h + std::string("\"x\":1\0}", 7)),
            "payload is not valid JSON: parse error at line 1, column 53: expected ',' or '}' "
            "after a value");
  EXPECT_EQ(error_of(h + "\"cwd\":\"a\tb\"}"),
            "payload is not valid JSON: parse error at line 1, column 56: control character in a "
            "string (must be escaped)");
  EXPECT_EQ(error_of(std::string("\0{}", 3)),
            "payload is not valid JSON: parse error at line 1, column 1: expected a value");
  // A NUL byte does not end the input: what follows the object is still looked at.
  EXPECT_EQ(error_of(h + std::string("\"x\":1}\0\"y\"", 11)),
            "payload is not valid JSON: parse error at line 1, column 54: unexpected data after "
            "the payload");
}

TEST(HookPayloadScan, TopLevelThatIsNotAnObject) {
  for (std::string_view text :
       {"[1,2]", "\"s\"", "12", "true", "null", " [ {\"session_id\":\"S\"} ] "})
    EXPECT_EQ(error_of(text), "payload is not a JSON object") << text;
  EXPECT_EQ(error_of("[1,2"),
            "payload is not valid JSON: parse error at line 1, column 5: unexpected end of input");
  EXPECT_EQ(error_of("this is not json"),
            "payload is not valid JSON: parse error at line 1, column 2: invalid literal");
  EXPECT_EQ(error_of("{}"), "payload has no transcript_path");
}

TEST(HookPayloadScan, AKeptFieldHasABoundedLength) {
  std::string h(kHead);
  auto fits = parse_hook_payload(h + "\"cwd\":\"" + std::string(kMaxHookFieldBytes, 'a') + "\"}");
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->cwd.size(), kMaxHookFieldBytes);
  EXPECT_EQ(error_of(h + "\"cwd\":\"" + std::string(kMaxHookFieldBytes + 1, 'a') + "\"}"),
            fmt::format("payload field 'cwd' is longer than {} bytes", kMaxHookFieldBytes));
  // A long key is none of ours and is skipped.
  auto p = parse_hook_payload(h + "\"" + std::string(100000, 'k') + "\":\"v\"}");
  EXPECT_TRUE(p);
}

TEST(HookPayloadScan, AReadErrorIsReportedAsItself) {
  int calls = 0;
  ByteSource broken = [&](char* buf, size_t) -> Result<size_t> {
    if (calls++ == 0) {
      buf[0] = '{';
      return size_t{1};
    }
    return fail("reading stdin: Input/output error");
  };
  auto p = scan_hook_payload(broken);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "reading stdin: Input/output error");
}

TEST(HookPayloadScan, LongStringsAroundEveryBoundaryKeepTheirContent) {
  // Escapes and quotes placed at every offset of 16-byte blocks and of chunk boundaries.
  for (size_t pad = 0; pad < 40; ++pad) {
    std::string value = std::string(pad, 'x') + "\\\"" + std::string(pad, 'y') + "\\u00e9";
    std::string text =
        std::string(kHead) + "\"tool_response\":\"" + value + "\",\"cwd\":\"" + value + "\"}";
    std::string expect = std::string(pad, 'x') + "\"" + std::string(pad, 'y') + "\xc3\xa9";
    for (size_t chunk : {size_t{5}, size_t{16}, size_t{17}}) {
      auto p = scan_hook_payload(chunks_of(text, chunk));
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(p->cwd, expect);
    }
  }
}

// A skipped string dense with escapes, as an Edit of source code carries, with one flaw put at
// every offset across several 64-byte blocks: the verdict and the error's position are the same
// at every chunk size, and the scan accepts exactly what a full JSON parser accepts.
TEST(HookPayloadScan, EscapeDenseSkippedStringsAreCheckedAtEveryOffset) {
  std::string code;
  for (int i = 0; code.size() < 300; ++i)
    code += fmt::format(R"(\tif (s[{}] == '\\' && n != \"caf\u00e9\") {{ return {}; }}\n)", i, i);
  const std::vector<std::string> flaws = {"",   "\\x", "\\u12G4", "\\u1\"",
                                          "\\", "\"",  "\x01",    "\\\\\\q"};
  for (const auto& flaw : flaws) {
    for (size_t at = 0; at <= 200; ++at) {
      std::string value = code.substr(0, at) + flaw + code.substr(at);
      std::string text =
          std::string(kHead) + "\"tool_response\":{\"originalFile\":\"" + value + "\"}}";
      bool valid = !json::parse(text, nullptr, false).is_discarded();
      auto whole = parse_hook_payload(text);
      ASSERT_EQ(whole.has_value(), valid)
          << "flaw " << flaw << " at " << at << ": "
          << (whole ? std::string("accepted") : whole.error().message);
      for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{100}}) {
        auto p = scan_hook_payload(chunks_of(text, chunk));
        ASSERT_EQ(p.has_value(), valid) << "flaw " << flaw << " at " << at << " chunk " << chunk;
        if (!valid) {
          EXPECT_EQ(p.error().message, whole.error().message) << "flaw " << flaw << " at " << at;
        }
      }
    }
  }
}

// Bytes that are not UTF-8 (a byte no sequence has, an overlong form, an encoded surrogate, a code
// point past U+10FFFF, a sequence cut short, a continuation byte alone), put at every offset of a
// skipped string dense with escapes as an Edit's (across its 64-byte blocks) and of a kept field:
// the payload is refused exactly when a full JSON parser refuses it, with the same error at every
// chunk size; well-formed sequences in the same places are accepted.
TEST(HookPayloadScan, BytesThatAreNotUtf8AreRefusedWhereverTheyLie) {
  std::string code;
  for (int i = 0; code.size() < 300; ++i)
    code += fmt::format(R"(\tif (s[{}] == '\\' && n != \"caf\u00e9\") {{ return {}; }}\n)", i, i);
  const std::vector<std::string> flaws = {"\xFF",
                                          "\xC0\x80",
                                          "\xE0\x80\x80",
                                          "\xED\xA0\x80",
                                          "\xF4\x90\x80\x80",
                                          "\xE2\x82",
                                          "\x80",
                                          "\xF8\x88\x80\x80\x80",
                                          "\xC3\xA9",
                                          "\xE2\x82\xAC",
                                          "\xF0\x9F\x98\x80",
                                          "\xF4\x8F\xBF\xBF"};
  int refused = 0;
  for (const auto& flaw : flaws) {
    for (size_t at = 0; at <= 200; ++at) {
      const std::string value = code.substr(0, at) + flaw + code.substr(at);
      for (const char* field : {"\"tool_response\":{\"originalFile\":\"", "\"cwd\":\""}) {
        const std::string text =
            std::string(kHead) + field + value + "\"" + (field[1] == 't' ? "}" : "") + "}";
        const bool valid = !json::parse(text, nullptr, false).is_discarded();
        auto whole = parse_hook_payload(text);
        ASSERT_EQ(whole.has_value(), valid)
            << testing::PrintToString(flaw) << " at " << at << ": "
            << (whole ? std::string("accepted") : whole.error().message);
        refused += valid ? 0 : 1;
        for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{100}}) {
          auto p = scan_hook_payload(chunks_of(text, chunk));
          ASSERT_EQ(p.has_value(), valid)
              << testing::PrintToString(flaw) << " at " << at << " chunk " << chunk;
          if (!valid) {
            EXPECT_EQ(p.error().message, whole.error().message) << at << " " << chunk;
          }
        }
      }
    }
  }
  EXPECT_GT(refused, 2000);
}

// The error names the first byte that is not UTF-8: its column, in a skipped string long enough
// for whole blocks and in a kept field, wherever chunks end.
TEST(HookPayloadScan, TheErrorNamesTheFirstByteThatIsNotUtf8) {
  struct Case {
    std::string bytes;
    size_t bad;  // which of them makes the text ill-formed
  };
  const std::vector<Case> cases = {{"\xFF", 0},         {"\xC0\x80", 0},
                                   {"\xE0\x80\x80", 1}, {"\xED\xA0\x80", 1},
                                   {"\xF4\x90\x80", 1}, {"\xE2\x82", 2},
                                   {"\x80", 0},         {"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98", 8}};
  for (const auto& c : cases) {
    for (size_t at : {size_t{0}, size_t{1}, size_t{62}, size_t{63}, size_t{64}, size_t{130}}) {
      for (const std::string field : {"tool_response", "cwd"}) {
        const std::string head = std::string(kHead) + "\"" + field + "\":\"";
        const std::string text =
            head + std::string(at, 'x') + c.bytes + std::string(200, 'y') + "\"}";
        const std::string want = fmt::format(
            "payload is not valid JSON: parse error at line 1, column {}: invalid UTF-8 in a "
            "string",
            head.size() + at + c.bad + 1);
        for (size_t chunk : {size_t{3}, size_t{64}, size_t{1} << 20}) {
          auto p = scan_hook_payload(chunks_of(text, chunk));
          ASSERT_FALSE(p) << testing::PrintToString(c.bytes) << " at " << at;
          EXPECT_EQ(p.error().message, want) << testing::PrintToString(c.bytes) << " at " << at
                                             << " in " << field << ", chunk " << chunk;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ctxkit::claude
