#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trim/trimmer.hpp"
#include "unit/temp_dir.hpp"
#include "unit/trim/trim_figures.hpp"

namespace ctxkit::trim {
namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using test::figures_of;

const std::string kOld = "aaaaaaaa-1111-4111-8111-111111111111";
const std::string kNew = "bbbbbbbb-2222-4222-8222-222222222222";

TrimOptions options(size_t threshold = 500) {
  TrimOptions o;
  o.threshold = threshold;
  o.tools = {"Read", "Bash", "Grep", "Glob"};
  o.new_session_id = kNew;
  o.notice_file = "/archive/p.jsonl";
  return o;
}

// Runs lines through a trimmer (each padded as the reader pads them); returns the new lines.
std::vector<std::string> run(Trimmer& t, const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  uint64_t n = 0;
  for (const auto& l : lines) {
    std::string padded = l + std::string(64, '\0');
    std::string o;
    t.process(std::string_view(padded.data(), l.size()), padded.size(), ++n, &o);
    out.push_back(o);
  }
  return out;
}

std::string tool_use(const std::string& id, const std::string& name,
                     const std::string& input_value = "ls", const std::string& msg_id = "msg_1") {
  ojson j;
  j["parentUuid"] = "p0";
  j["isSidechain"] = false;
  j["message"] = {{"id", msg_id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", "claude-sonnet-4-5"},
                  {"content", ojson::array({{{"type", "tool_use"},
                                             {"id", id},
                                             {"name", name},
                                             {"input", {{"command", input_value}}}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 7},
                    {"cache_read_input_tokens", 19995},
                    {"output_tokens", 20},
                    {"cache_creation", {{"ephemeral_5m_input_tokens", 3}}},
                    {"service_tier", "standard"}}}};
  j["type"] = "assistant";
  j["uuid"] = "u-" + id;
  j["sessionId"] = kOld;
  return j.dump();
}

std::string tool_result(const std::string& id, const ojson& content, bool sidechain = false) {
  ojson j;
  j["parentUuid"] = "u-" + id;
  j["isSidechain"] = sidechain;
  j["type"] = "user";
  j["message"] = {{"role", "user"},
                  {"content", ojson::array({{{"tool_use_id", id},
                                             {"type", "tool_result"},
                                             {"content", content},
                                             {"is_error", false}}})}};
  j["uuid"] = "r-" + id;
  j["timestamp"] = "2026-11-21T12:00:00.000Z";
  j["toolUseResult"] = {
      {"stdout", content.is_string() ? content.get<std::string>() : std::string("blocks")}};
  j["sessionId"] = kOld;
  return j.dump();
}

std::string replace_session(std::string s) {
  auto pos = s.find("\"sessionId\":\"" + kOld + "\"");
  if (pos != std::string::npos) s.replace(pos + 13, kOld.size(), kNew);
  return s;
}

std::string big(size_t n, char c = 'x') {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i % 50 == 49) ? '\n' : c;
  return s;
}

TEST(Trimmer, LineWithoutToolsChangesOnlyItsSessionId) {
  std::string line =
      R"({"type":"user","message":{"role":"user","content":"hello"},"uuid":"x","parentUuid":null,"sessionId":")" +
      kOld + R"(","cwd":"/p","weird":  [1, 2 , {"k" : "v"}]})";
  Trimmer t(options());
  auto out = run(t, {line});
  EXPECT_EQ(out[0], replace_session(line));
}

TEST(Trimmer, LongResultOfTargetToolIsCutWithNotice) {
  std::string output = big(5000);
  Trimmer t(options());
  auto lines =
      std::vector<std::string>{tool_use("toolu_1", "Bash"), tool_result("toolu_1", output)};
  auto out = run(t, lines);
  json r = json::parse(out[1]);
  std::string content = r["message"]["content"][0]["content"];
  std::string expected_notice =
      "\n[...truncated - original content was 5000 characters, showing first 500. See line 2 of "
      "/archive/p.jsonl for full content]";
  EXPECT_EQ(content, output.substr(0, 500) + expected_notice);
  // Every byte outside the content value is as it was (bar the sessionId).
  std::string before = replace_session(lines[1]);
  std::string escaped_original = json(output).dump();
  auto pos = before.find(escaped_original);
  ASSERT_NE(pos, std::string::npos);
  std::string expected_line = before;
  expected_line.replace(pos, escaped_original.size(), json(content).dump());
  EXPECT_EQ(out[1], expected_line);
  EXPECT_EQ(r["toolUseResult"]["stdout"], output);  // UI data is kept
  EXPECT_EQ(r["uuid"], "r-toolu_1");
  EXPECT_EQ(t.stats().results_trimmed, 1u);
  EXPECT_EQ(t.stats().chars_saved, 5000u - 500u - (expected_notice.size()));
  EXPECT_EQ(t.stats().per_tool.at("Bash").trimmed, 1u);
}

TEST(Trimmer, OtherToolsAndShortResultsAreLeftAlone) {
  Trimmer t(options());
  auto lines =
      std::vector<std::string>{tool_use("toolu_w", "Write"), tool_result("toolu_w", big(5000)),
                               tool_use("toolu_s", "Bash"), tool_result("toolu_s", big(500))};
  auto out = run(t, lines);
  EXPECT_EQ(out[1], replace_session(lines[1]));
  EXPECT_EQ(out[3], replace_session(lines[3]));
  EXPECT_EQ(t.stats().results_trimmed, 0u);
  EXPECT_EQ(t.stats().per_tool.at("Write").results, 1u);
}

TEST(Trimmer, ACutThatSavesNothingIsNotMade) {
  Trimmer t(options());
  auto lines =
      std::vector<std::string>{tool_use("toolu_1", "Bash"), tool_result("toolu_1", big(560))};
  auto out = run(t, lines);
  EXPECT_EQ(out[1], replace_session(lines[1]));
}

TEST(Trimmer, RetrimmingChangesNothingMore) {
  Trimmer first(options());
  auto lines =
      std::vector<std::string>{tool_use("toolu_1", "Bash"), tool_result("toolu_1", big(5000))};
  auto once = run(first, lines);
  TrimOptions again = options();
  again.new_session_id = kNew;
  Trimmer second(again);
  auto twice = run(second, once);
  EXPECT_EQ(twice, once);
  EXPECT_EQ(second.stats().chars_saved, 0u);
}

TEST(Trimmer, UsageNumbersAreZeroedEverywhereInUsage) {
  Trimmer t(options());
  auto out = run(t, {tool_use("toolu_1", "Bash")});
  json j = json::parse(out[0]);
  auto u = j["message"]["usage"];
  EXPECT_EQ(u["input_tokens"], 0);
  EXPECT_EQ(u["cache_creation_input_tokens"], 0);
  EXPECT_EQ(u["cache_read_input_tokens"], 0);
  EXPECT_EQ(u["output_tokens"], 0);
  EXPECT_EQ(u["cache_creation"]["ephemeral_5m_input_tokens"], 0);
  EXPECT_EQ(u["service_tier"], "standard");
}

TEST(Trimmer, ContextFullMarkersAreNeutralized) {
  std::string line =
      R"({"type":"assistant","isApiErrorMessage":true,"error":"invalid_request","message":{"model":"<synthetic>","content":[{"type":"text","text":"Prompt is too long"}],"usage":{"input_tokens":0}},"sessionId":")" +
      kOld + "\"}";
  Trimmer t(options());
  json j = json::parse(run(t, {line})[0]);
  EXPECT_EQ(j["isApiErrorMessage"], false);
  EXPECT_TRUE(j["error"].is_null());
}

TEST(Trimmer, LongInputStringsOfTargetToolsAreShortened) {
  Trimmer t(options());
  std::string cmd = big(3000, 'c');
  auto out = run(t, {tool_use("toolu_1", "Bash", cmd), tool_use("toolu_2", "Write", cmd, "msg_2")});
  json a = json::parse(out[0]);
  std::string shortened = a["message"]["content"][0]["input"]["command"];
  EXPECT_TRUE(shortened.starts_with(cmd.substr(0, 500) +
                                    "\n[...truncated - original content was 3000 characters"))
      << shortened.substr(0, 600);
  json b = json::parse(out[1]);
  EXPECT_EQ(b["message"]["content"][0]["input"]["command"], cmd);  // Write is not a target tool
  EXPECT_EQ(t.stats().inputs_trimmed, 1u);
}

TEST(Trimmer, ArrayContentIsCutAndImagesBecomePlaceholders) {
  ojson blocks = ojson::array(
      {{{"type", "text"}, {"text", big(400, 'a')}},
       {{"type", "image"},
        {"source",
         {{"type", "base64"}, {"media_type", "image/png"}, {"data", std::string(20000, 'Q')}}}},
       {{"type", "text"}, {"text", big(400, 'b')}}});
  Trimmer t(options());
  auto out = run(t, {tool_use("toolu_1", "Read"), tool_result("toolu_1", blocks)});
  json c = json::parse(out[1])["message"]["content"][0]["content"];
  ASSERT_TRUE(c.is_array());
  ASSERT_EQ(c.size(), 2u);
  std::string text = c[0]["text"];
  EXPECT_TRUE(
      text.starts_with(big(400, 'a') + "\n" + big(400, 'b').substr(0, 99) +
                       "\n[...truncated - original content was 800 characters, showing first 500."))
      << text;
  EXPECT_EQ(c[1]["type"], "text");
  EXPECT_EQ(c[1]["text"],
            "[image removed by ctx-trim: image/png, 20000 base64 characters. See line 2 of "
            "/archive/p.jsonl for the original]");
  EXPECT_EQ(t.stats().images_replaced, 1u);
}

TEST(Trimmer, ImagesAloneAreReplacedInPlace) {
  ojson blocks = ojson::array(
      {{{"type", "text"}, {"text", "small"}},
       {{"type", "image"},
        {"source",
         {{"type", "base64"}, {"media_type", "image/jpeg"}, {"data", std::string(9000, 'Q')}}}}});
  Trimmer t(options());
  auto out = run(t, {tool_use("toolu_1", "Read"), tool_result("toolu_1", blocks)});
  json c = json::parse(out[1])["message"]["content"][0]["content"];
  EXPECT_EQ(c[0]["text"], "small");
  EXPECT_EQ(c[1]["type"], "text");
}

TEST(Trimmer, InlineSidechainLinesAreTrimmedToo) {
  Trimmer t(options());
  auto out =
      run(t, {tool_use("toolu_1", "Grep"), tool_result("toolu_1", big(4000), /*sidechain=*/true)});
  EXPECT_EQ(t.stats().results_trimmed, 1u);
  EXPECT_TRUE(json::parse(out[1])["isSidechain"].get<bool>());
}

TEST(Trimmer, NotJsonOrNotUtf8PassesThroughUnchanged) {
  Trimmer t(options());
  std::string broken = R"({"type":"user","sessionId":")" + kOld + R"(","message":)";
  std::string bad_utf8 = "{\"type\":\"user\",\"sessionId\":\"" + kOld + "\",\"x\":\"\xff\xfe\"}";
  auto out = run(t, {broken, bad_utf8, "plain text"});
  EXPECT_EQ(out[0], broken);
  EXPECT_EQ(out[1], bad_utf8);
  EXPECT_EQ(out[2], "plain text");
  EXPECT_EQ(t.stats().lines_unparsed, 3u);
}

TEST(Trimmer, KeepRecentProtectsTheLastResponses) {
  std::vector<std::string> lines = {
      tool_use("toolu_1", "Bash", "ls", "msg_1"), tool_result("toolu_1", big(3000)),
      tool_use("toolu_2", "Bash", "ls", "msg_2"), tool_result("toolu_2", big(3000))};
  Trimmer scan(options());
  for (const auto& l : lines) {
    std::string padded = l + std::string(64, '\0');
    scan.prescan(std::string_view(padded.data(), l.size()), padded.size());
  }
  TrimOptions o = options();
  o.protected_tool_use_ids = scan.tool_use_ids_of_last_responses(1);
  EXPECT_EQ(o.protected_tool_use_ids, (std::unordered_set<std::string>{"toolu_2"}));
  Trimmer t(o);
  auto out = run(t, lines);
  EXPECT_NE(out[1], replace_session(lines[1]));
  EXPECT_EQ(out[3], replace_session(lines[3]));
}

TEST(Trimmer, DeeplyNestedInputsAndResultsAreCopiedUnchangedWithoutCrashing) {
  Trimmer t(options());
  // 50,000 nested arrays in a tool input, with a long string at the bottom, beside a long
  // string at the top that is still cut.
  std::string deep(50000, '[');
  deep += "\"" + std::string(3000, 'd') + "\"" + std::string(50000, ']');
  std::string use = tool_use("toolu_deep", "Bash", std::string(3000, 'x'));
  std::string marker = "\"command\":\"" + std::string(3000, 'x') + "\"";
  size_t at = use.find(marker);
  ASSERT_NE(at, std::string::npos);
  use.insert(at + marker.size(), ",\"deep\":" + deep);
  // 10,000 tool_results nested in a result's content.
  std::string nested = "\"" + std::string(3000, 'n') + "\"";
  for (int i = 0; i < 10000; ++i)
    nested = R"([{"type":"tool_result","tool_use_id":"x","content":)" + nested + "}]";
  std::string result = tool_result("toolu_deep", "placeholder");
  size_t p = result.find("\"placeholder\"");
  ASSERT_NE(p, std::string::npos);
  result.replace(p, 13, nested);
  auto out = run(t, {use, result});
  ASSERT_TRUE(json::accept(out[0]));
  EXPECT_NE(out[0].find(deep), std::string::npos);
  EXPECT_EQ(out[0].find(std::string(3000, 'x')), std::string::npos);
  EXPECT_EQ(t.stats().inputs_trimmed, 1u);
  EXPECT_NE(out[1].find(nested.substr(0, 20000)), std::string::npos);
  EXPECT_EQ(t.stats().lines, 2u);
}

TEST(Trimmer, AnalysisOnlyGivesTheSameFigures) {
  std::vector<std::string> lines = {tool_use("toolu_1", "Bash"), tool_result("toolu_1", big(3000)),
                                    tool_use("toolu_2", "Read", "x", "m2"),
                                    tool_result("toolu_2", big(9000))};
  Trimmer writing(options()), analysing(options());
  run(writing, lines);
  uint64_t n = 0;
  for (const auto& l : lines) {
    std::string padded = l + std::string(64, '\0');
    analysing.process(std::string_view(padded.data(), l.size()), padded.size(), ++n, nullptr);
  }
  EXPECT_EQ(analysing.stats().chars_saved, writing.stats().chars_saved);
  EXPECT_EQ(analysing.stats().results_trimmed, writing.stats().results_trimmed);
}

// A dry run counts the notice's characters without writing it: at the edge (a result a character
// longer or shorter than what a cut would leave, on lines whose numbers have more digits, with a
// file name not in ASCII), the figures are what the written copy saves, character for character.
TEST(Trimmer, AnalysisOnlyGivesTheSameFiguresAtTheEdgeOfTheNotice) {
  TrimOptions o = options(40);
  o.notice_file = "/archiv\u00e9/\u65e5\u672c/p.jsonl";
  auto code_points = [](const std::string& s) {
    uint64_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  };
  // 40 kept + the notice (its three numbers of 2 to 6 digits): some results are cut, some not.
  const size_t centre = 40 + code_points("\n" + Trimmer::notice(0, 0, 0, o.notice_file)) + 6;
  for (uint64_t first_line : {uint64_t{1}, uint64_t{95}, uint64_t{99990}}) {
    SCOPED_TRACE(first_line);
    std::vector<std::string> lines;
    std::vector<uint64_t> original;  // characters of each line's result (0: a tool_use line)
    for (size_t len = centre - 14; len < centre + 14; ++len) {
      const std::string id = "toolu_" + std::to_string(len), aid = "toolu_a" + std::to_string(len);
      lines.push_back(tool_use(id, "Bash"));
      lines.push_back(tool_result(id, std::string(len, 'y')));
      lines.push_back(tool_use(aid, "Read"));
      lines.push_back(tool_result(aid, ojson::array({{{"type", "text"}, {"text", big(len / 2)}},
                                                     {{"type", "text"}, {"text", big(len / 2)}}})));
      original.insert(original.end(), {0, len, 0, len / 2 * 2});
    }
    Trimmer writing(o), analysing(o);
    uint64_t saved = 0, n = first_line;
    for (size_t i = 0; i < lines.size(); ++i, ++n) {
      const std::string& l = lines[i];
      std::string padded = l + std::string(64, '\0');
      std::string out;
      writing.process(std::string_view(padded.data(), l.size()), padded.size(), n, &out);
      analysing.process(std::string_view(padded.data(), l.size()), padded.size(), n, nullptr);
      if (original[i] == 0) continue;
      const json c = json::parse(out)["message"]["content"][0]["content"];
      const std::string text =
          c.is_string() ? c.get<std::string>() : c[0]["text"].get<std::string>();
      if (text.find(Trimmer::kNoticeMarker) != std::string::npos)
        saved += original[i] - code_points(text);
    }
    const TrimStats &w = writing.stats(), &a = analysing.stats();
    EXPECT_GT(w.results_trimmed, 0u);
    EXPECT_LT(w.results_trimmed, lines.size() / 2);  // the edge is crossed
    EXPECT_EQ(w.chars_saved, saved);
    EXPECT_EQ(a.chars_saved, saved);
    EXPECT_EQ(a.results_trimmed, w.results_trimmed);
    for (const auto& [tool, t] : w.per_tool) {
      EXPECT_EQ(a.per_tool.at(tool).chars_saved, t.chars_saved) << tool;
      EXPECT_EQ(a.per_tool.at(tool).trimmed, t.trimmed) << tool;
    }
  }
}

// Claude Code 2.1.332 keeps copies of the messages it sent in `api-request-blob` lines, tool
// results included. The copy is cut too (the file shrinks), but the figures say what the model no
// longer sees: each tool result once.
std::string blob_of(const std::string& id, const std::string& content) {
  ojson j;
  j["type"] = "api-request-blob";
  j["sessionId"] = kOld;
  j["hash"] = "9887b538";
  j["message"] = {
      {"role", "user"},
      {"content",
       ojson::array({{{"tool_use_id", id}, {"type", "tool_result"}, {"content", content}}})}};
  return j.dump();
}

TEST(Trimmer, ACopyOfAToolResultIsCutButCountedOnce) {
  const std::string text = big(3000);
  Trimmer t(options());
  auto out = run(t, {tool_use("toolu_1", "Bash"), tool_result("toolu_1", text),
                     blob_of("toolu_1", text + "<total_tokens>")});
  EXPECT_EQ(t.stats().results_trimmed, 1u);
  EXPECT_EQ(t.stats().per_tool.at("Bash").results, 1u);
  EXPECT_EQ(t.stats().per_tool.at("Bash").trimmed, 1u);
  // The saving is the conversation's result's alone.
  Trimmer once(options());
  run(once, {tool_use("toolu_1", "Bash"), tool_result("toolu_1", text)});
  EXPECT_EQ(t.stats().chars_saved, once.stats().chars_saved);
  EXPECT_GT(t.stats().chars_saved, 2000u);
  // ... and the copy is cut all the same.
  EXPECT_LT(out[2].size(), 1000u);
  EXPECT_NE(out[2].find(Trimmer::kNoticeMarker), std::string::npos);
}

TEST(Trimmer, TheSameResultInTwoConversationLinesIsCountedOnce) {
  const std::string text = big(3000);
  Trimmer t(options());
  run(t, {tool_use("toolu_1", "Bash"), tool_result("toolu_1", text), tool_result("toolu_1", text),
          tool_use("toolu_2", "Bash"), tool_result("toolu_2", text)});
  EXPECT_EQ(t.stats().results_trimmed, 2u);
  EXPECT_EQ(t.stats().per_tool.at("Bash").results, 2u);
}

TEST(Trimmer, ALineIsCountedByItsTypeWhereverTheTypeStands) {
  // The type after the message (as tool_use() writes it) or before it: the same figures.
  const std::string text = big(3000);
  ojson late = ojson::parse(blob_of("toolu_1", text));
  ojson early;
  early["message"] = late["message"];
  early["sessionId"] = kOld;
  early["type"] = "api-request-blob";
  Trimmer t(options());
  run(t, {tool_use("toolu_1", "Bash"), early.dump(), tool_result("toolu_1", text)});
  EXPECT_EQ(t.stats().results_trimmed, 1u);
  EXPECT_EQ(t.stats().per_tool.at("Bash").results, 1u);
}

TEST(Trimmer, RecordedSessionWithTwoLargeResultsReportsTwo) {
  // Recorded from Claude Code 2.1.332: two Bash results of about 14,000 characters, each also in an
  // api-request-blob line, among the new line types (api-request, prompt_snapshot, cost-state,
  // ...).
  const auto lines =
      test::file_lines(test::fixture_root() / "claude-code-2.1.332/trim/two_bash_results.jsonl");
  ASSERT_GT(lines.size(), 20u);
  Trimmer t(options());
  const auto out = run(t, lines);
  EXPECT_EQ(t.stats().results_trimmed, 2u);
  EXPECT_EQ(t.stats().per_tool.at("Bash").results, 2u);
  EXPECT_LT(t.stats().chars_saved, 2 * 16000u);
  EXPECT_GT(t.stats().chars_saved, 2 * 13000u);
  size_t blobs_cut = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto type = json::parse(lines[i]).value("type", "");
    if (type == "api-request-blob" && out[i].size() < lines[i].size()) ++blobs_cut;
    if (type == "user" || type == "assistant" || type == "api-request-blob") continue;
    // Every other line is copied as it was, but for the session id it names.
    std::string expected = lines[i];
    const std::string id = json::parse(lines[i]).value("sessionId", "");
    if (const size_t at = expected.find("\"sessionId\":\"" + id + "\"");
        !id.empty() && at != std::string::npos)
      expected.replace(at + 13, id.size(), kNew);
    EXPECT_EQ(out[i], expected) << "line " << i + 1 << " (" << type << ")";
  }
  EXPECT_EQ(blobs_cut, 2u);
}

// One line holding several blocks: [type, id-or-tool_use_id, name-or-content] each.
std::string line_of(const std::string& type, const std::vector<ojson>& blocks) {
  ojson j;
  j["type"] = type;
  j["message"] = {{"role", type == "assistant" ? "assistant" : "user"}, {"content", ojson(blocks)}};
  j["sessionId"] = kOld;
  return j.dump();
}

// A dry run read in two parts (Trimmer::start_mid_file and join) gives, wherever the file is cut,
// the figures of one pass: results whose tool_use stands before the cut, a tool id used again
// under another name, results before their tool_use or with none, copies of a result on both
// sides (in the conversation and in api-request-blob lines), long inputs, images, a line naming
// tools from both parts, error markers, lines that are not JSON, and line numbers whose digits
// change (the notice's length counts them).
TEST(TrimmerInTwoParts, EveryCutOfTheFileGivesTheFiguresOfOnePass) {
  TrimOptions o = options(40);
  o.new_session_id.clear();  // a dry run
  const ojson image = {
      {"type", "image"},
      {"source",
       {{"type", "base64"}, {"media_type", "image/png"}, {"data", std::string(900, 'Q')}}}};
  const ojson blocks = ojson::array({{{"type", "text"}, {"text", big(600, 'a')}}, image});
  // A result this long is cut only when the line's number has one digit fewer.
  const size_t edge = 40 + Trimmer::notice(0, 0, 0, o.notice_file).size() + 1 + 5;
  ojson error_line = ojson::parse(tool_result("toolu_5", big(700)));
  error_line["isApiErrorMessage"] = true;
  // Lines without tools first: the others stand at lines 86 to 109.
  std::vector<std::string> lines(85, R"({"type":"progress","sessionId":")" + kOld + R"("})");
  lines.insert(
      lines.end(),
      {
          tool_use("toolu_1", "Bash"),
          tool_result("toolu_1", std::string(edge, 'f')),
          tool_use("toolu_2", "Read", big(400, 'i'), "m2"),  // a long input
          blob_of("toolu_2", big(700)),                      // a copy before the result
          tool_result("toolu_2", blocks),
          "not json, but \"tool_use\" in it",
          tool_result("toolu_9", big(700)),  // a result before its tool_use
          tool_use("toolu_9", "Grep", "x", "m9"),
          tool_use("toolu_3", "Write", "x", "m3"),  // not a target tool
          tool_result("toolu_3", big(700)),
          tool_use("toolu_4", "Bash", "x", "m4"),
          tool_use("toolu_4", "Read", "x", "m4b"),  // the same id under another name
          tool_result("toolu_4", big(700)),
          tool_use("toolu_5", "Glob", "x", "m5"),
          error_line.dump(),
          line_of("user",
                  {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", big(700)}},
                   {{"type", "tool_use"}, {"id", "toolu_6"}, {"name", "Bash"}, {"input", {}}},
                   {{"type", "tool_result"}, {"tool_use_id", "toolu_6"}, {"content", big(700)}},
                   {{"type", "tool_result"}, {"tool_use_id", "toolu_2"}, {"content", blocks}}}),
          tool_result("", big(700)),            // no id
          tool_result("toolu_none", big(700)),  // no tool_use anywhere
          blob_of("toolu_1", big(700)),
          tool_result("toolu_9", big(700)),  // a copy of the result before its tool_use
          tool_result("toolu_2", blocks, /*sidechain=*/true),
          tool_use("toolu_7", "Bash", big(300, 'j'), "m7"),
          tool_result("toolu_7", std::string(edge, 'e')),  // at the edge of a cut
          tool_result("toolu_4", big(700)),
      });
  // Line i is numbered i + 1, or in the second part, from 1.
  auto feed = [&](Trimmer& t, size_t from, size_t to, uint64_t first_number,
                  std::vector<size_t>* put_aside) {
    for (size_t i = from; i < to; ++i) {
      std::string padded = lines[i] + std::string(64, '\0');
      t.process(std::string_view(padded.data(), lines[i].size()), padded.size(),
                first_number + (i - from), nullptr);
      if (put_aside && t.last_line_deferred()) put_aside->push_back(i);
    }
  };
  Trimmer one(o);
  feed(one, 0, lines.size(), 1, nullptr);
  EXPECT_GE(one.stats().results_trimmed, 5u) << figures_of(one.stats());
  EXPECT_GT(one.stats().inputs_trimmed, 0u);
  EXPECT_GT(one.stats().images_replaced, 0u);
  size_t ever_put_aside = 0;
  for (size_t cut = 0; cut <= lines.size(); ++cut) {
    SCOPED_TRACE(fmt::format("second part from line {}", cut + 1));
    Trimmer first(o), second(o), rest(o);
    second.start_mid_file();
    std::vector<size_t> put_aside;
    feed(first, 0, cut, 1, nullptr);
    feed(second, cut, lines.size(), 1, &put_aside);
    rest.continue_after(first);
    for (size_t k = 0; k < put_aside.size(); ++k) {
      rest.recall_names(second, k);
      feed(rest, put_aside[k], put_aside[k] + 1, put_aside[k] + 1, nullptr);
    }
    ever_put_aside += put_aside.size();
    EXPECT_EQ(figures_of(Trimmer::join(first, second, rest)), figures_of(one.stats()));
  }
  EXPECT_GT(ever_put_aside, lines.size());  // the lines were put aside and taken up again
}

}  // namespace
}  // namespace ctxkit::trim
