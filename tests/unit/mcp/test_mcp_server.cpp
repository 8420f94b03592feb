#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "mcp/json_rpc.hpp"
#include "mcp/mcp_server.hpp"

namespace ctxkit::mcp {
namespace {

using json = nlohmann::json;

ToolRegistry test_tools() {
  ToolRegistry tools;
  tools.add({"echo", "Echoes text.",
             json{{"type", "object"},
                  {"properties", {{"text", {{"type", "string"}}}}},
                  {"required", {"text"}}},
             [](const json& args) -> ToolResult {
               if (!args.contains("text") || !args["text"].is_string())
                 return {R"({"error":"text is required"})", true};
               return {args["text"].get<std::string>(), false};
             }});
  tools.add({"boom", "Throws.", json{{"type", "object"}},
             [](const json&) -> ToolResult { throw std::runtime_error("exploded"); }});
  return tools;
}

class McpServerTest : public ::testing::Test {
 protected:
  McpServer server{ServerInfo{"test-server", "1.2.3", "Call echo."}, test_tools()};

  // Sends one line; returns the parsed answer (null when there is none).
  json send(const std::string& line) {
    auto out = server.handle_line(line);
    if (!out) return nullptr;
    EXPECT_EQ(out->back(), '\n');
    EXPECT_EQ(out->find('\n'), out->size() - 1) << "an answer is exactly one line";
    return json::parse(*out);
  }
  json send(const char* line) { return send(std::string(line)); }
  json send_json(const json& message) { return send(message.dump()); }
  json initialize(const std::string& version) {
    return send_json(
        json{{"jsonrpc", "2.0"},
             {"id", 0},
             {"method", "initialize"},
             {"params", {{"protocolVersion", version}, {"capabilities", json::object()}}}});
  }
  json call(const std::string& name, json arguments, int id = 5) {
    return send_json(json{{"jsonrpc", "2.0"},
                          {"id", id},
                          {"method", "tools/call"},
                          {"params", {{"name", name}, {"arguments", std::move(arguments)}}}});
  }
};

TEST_F(McpServerTest, InitializeAnswersTheClientVersionWithInfoAndInstructions) {
  // The exact first message Claude Code 2.1.197 sends.
  json r = send(std::string(
      R"({"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"claude-code","title":"Claude Code","version":"2.1.197"}},"jsonrpc":"2.0","id":0})"));
  EXPECT_EQ(r["id"], 0);
  EXPECT_EQ(r["jsonrpc"], "2.0");
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(r["result"]["capabilities"], json::parse(R"({"tools":{"listChanged":false}})"));
  EXPECT_EQ(r["result"]["serverInfo"], json::parse(R"({"name":"test-server","version":"1.2.3"})"));
  EXPECT_EQ(r["result"]["instructions"], "Call echo.");
  EXPECT_EQ(server.protocol_version(), "2025-11-25");
}

TEST_F(McpServerTest, InitializeKeepsEachOlderSupportedVersion) {
  for (const char* v : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    EXPECT_EQ(initialize(v)["result"]["protocolVersion"], v);
  }
}

TEST_F(McpServerTest, InitializeAnswersTheLatestForAnUnknownVersion) {
  EXPECT_EQ(initialize("1999-01-01")["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(initialize("2030-01-01")["result"]["protocolVersion"], "2025-11-25");
}

TEST_F(McpServerTest, InitializeWithoutAVersionIsInvalidParams) {
  json r = send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(r["error"]["message"], "Invalid params: protocolVersion must be a string");
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":2,"method":"initialize"})")["error"]["code"],
            kInvalidParams);
}

TEST_F(McpServerTest, NotificationsAreNeverAnswered) {
  EXPECT_TRUE(send(R"({"method":"notifications/initialized","jsonrpc":"2.0"})").is_null());
  EXPECT_TRUE(server.initialized());
  EXPECT_TRUE(
      send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})")
          .is_null());
  EXPECT_TRUE(send(R"({"jsonrpc":"2.0","method":"no/such/notification"})").is_null());
}

TEST_F(McpServerTest, ClientResponsesAreIgnored) {
  EXPECT_TRUE(send(R"({"jsonrpc":"2.0","id":7,"result":{}})").is_null());
  EXPECT_TRUE(send(R"({"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"x"}})").is_null());
}

TEST_F(McpServerTest, PingAnswersAnEmptyResult) {
  json r = send(R"({"jsonrpc":"2.0","id":"p-1","method":"ping"})");
  EXPECT_EQ(r["id"], "p-1");
  EXPECT_EQ(r["result"], json::object());
}

TEST_F(McpServerTest, ToolsListGivesNameDescriptionAndSchemaInOrder) {
  json r = send(R"({"method":"tools/list","jsonrpc":"2.0","id":1})");
  ASSERT_EQ(r["result"]["tools"].size(), 2u);
  EXPECT_EQ(r["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(r["result"]["tools"][0]["description"], "Echoes text.");
  EXPECT_EQ(r["result"]["tools"][0]["inputSchema"]["required"], json::array({"text"}));
  EXPECT_EQ(r["result"]["tools"][1]["name"], "boom");
  EXPECT_FALSE(r["result"].contains("nextCursor"));
}

TEST_F(McpServerTest, ToolsCallReturnsTextContentWithoutStructuredContent) {
  // With the _meta Claude Code adds.
  json r = send(std::string(
      R"({"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"claudecode/toolUseId":"toolu_1","progressToken":2}},"jsonrpc":"2.0","id":2})"));
  EXPECT_EQ(r["id"], 2);
  EXPECT_EQ(r["result"],
            json::parse(R"({"content":[{"type":"text","text":"hello"}],"isError":false})"));
}

TEST_F(McpServerTest, ToolErrorsAreIsErrorResults) {
  EXPECT_EQ(
      call("echo", json::object())["result"],
      json::parse(
          R"({"content":[{"type":"text","text":"{\"error\":\"text is required\"}"}],"isError":true})"));
  EXPECT_EQ(
      call("boom", json::object())["result"],
      json::parse(
          R"({"content":[{"type":"text","text":"{\"error\":\"exploded\"}"}],"isError":true})"));
  EXPECT_EQ(
      call("nope", json::object())["result"],
      json::parse(
          R"({"content":[{"type":"text","text":"{\"error\":\"Unknown tool: nope\"}"}],"isError":true})"));
}

TEST_F(McpServerTest, ToolsCallWithoutArgumentsPassesAnEmptyObject) {
  json r = send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}})");
  EXPECT_EQ(r["result"]["isError"], true);
  r = send(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":null}})");
  EXPECT_EQ(r["result"]["isError"], true);
}

TEST_F(McpServerTest, MalformedToolsCallParamsAreInvalidParams) {
  json r = send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(r["error"]["message"], "Invalid params: tools/call name must be a string");
  r = send(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":[1]}})");
  EXPECT_EQ(r["error"]["message"], "Invalid params: arguments must be an object");
  r = send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call"})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  r = send(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1,2]})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
}

TEST_F(McpServerTest, UnknownMethodIsMethodNotFound) {
  json r = send(R"({"jsonrpc":"2.0","id":9,"method":"resources/list"})");
  EXPECT_EQ(r["id"], 9);
  EXPECT_EQ(r["error"]["code"], kMethodNotFound);
  EXPECT_EQ(r["error"]["message"], "Method not found: resources/list");
}

TEST_F(McpServerTest, InvalidRequestsAnswerMinus32600) {
  struct Case {
    const char* line;
    json id;
    const char* message;
  };
  const Case cases[] = {
      {R"(42)", nullptr, "Invalid Request: a message must be a JSON object"},
      {R"("x")", nullptr, "Invalid Request: a message must be a JSON object"},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", nullptr,
       "Invalid Request: id must be a string or a number"},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", nullptr,
       "Invalid Request: id must be a string or a number"},
      {R"({"jsonrpc":"1.0","id":3,"method":"ping"})", 3,
       "Invalid Request: jsonrpc must be \"2.0\""},
      {R"({"id":3,"method":"ping"})", 3, "Invalid Request: jsonrpc must be \"2.0\""},
      {R"({"jsonrpc":"2.0","id":4,"method":5})", 4, "Invalid Request: method must be a string"},
      {R"({"jsonrpc":"2.0","id":4})", 4, "Invalid Request: method must be a string"},
      {R"({"jsonrpc":"2.0","method":1,"params":"bar"})", nullptr,
       "Invalid Request: method must be a string"},
      {R"({"jsonrpc":"2.0","id":5,"method":"ping","params":"bar"})", 5,
       "Invalid Request: params must be an object or an array"},
  };
  for (const auto& c : cases) {
    json r = send(std::string(c.line));
    EXPECT_EQ(r["id"], c.id) << c.line;
    EXPECT_EQ(r["error"]["code"], kInvalidRequest) << c.line;
    EXPECT_EQ(r["error"]["message"], c.message) << c.line;
  }
}

TEST_F(McpServerTest, ParseErrorsAnswerMinus32700WithNullId) {
  for (const std::string& line :
       {std::string("{"), std::string("{\"jsonrpc\":\"2.0\",}"), std::string("not json"),
        std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing")}) {
    json r = send(line);
    EXPECT_TRUE(r["id"].is_null()) << line;
    EXPECT_EQ(r["error"]["code"], kParseError) << line;
    EXPECT_EQ(r["error"]["message"].get<std::string>().rfind("Parse error: ", 0), 0u) << line;
  }
}

// A number past double's range does not parse either (nlohmann reports it as out_of_range, not
// as a parse_error): -32700 with id null, as for any unparsable line, and the server goes on.
TEST_F(McpServerTest, ANumberOutOfRangeIsAParseError) {
  for (const std::string& line :
       {std::string(R"({"jsonrpc":"2.0","id":1e400,"method":"ping"})"),
        std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-1e400}})")}) {
    json r = send(line);
    EXPECT_TRUE(r["id"].is_null()) << line;
    EXPECT_EQ(r["error"]["code"], kParseError) << line;
    EXPECT_EQ(r["error"]["message"],
              "Parse error: number overflow parsing '" +
                  std::string(line.find("-1e400") != std::string::npos ? "-1e400" : "1e400") + "'")
        << r.dump();
  }
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})")["result"], json::object());
}

TEST_F(McpServerTest, InvalidUtf8AndNulBytesAreParseErrors) {
  json r = send(std::string(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}"));
  EXPECT_EQ(r["error"]["code"], kParseError);
  r = send(std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\0ing\"}", 40));
  EXPECT_EQ(r["error"]["code"], kParseError);
  EXPECT_EQ(r["error"]["message"], "Parse error: message contains a NUL byte");
  // The server still works afterwards.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})")["result"], json::object());
}

TEST_F(McpServerTest, DeepNestingIsRefusedWithoutCrashing) {
  std::string deep =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":)";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}}}";
  json r = send(deep);
  EXPECT_EQ(r["error"]["code"], kParseError);
  EXPECT_EQ(r["error"]["message"], "Parse error: message nests deeper than 64 levels");
  // Unbalanced too.
  EXPECT_EQ(send(std::string(100000, '{'))["error"]["code"], kParseError);
}

TEST_F(McpServerTest, BracketsInsideStringsDoNotCountAsNesting) {
  json r = call("echo", json{{"text", std::string(1000, '[') + "\\\"{"}});
  EXPECT_EQ(r["result"]["isError"], false);
  EXPECT_EQ(r["result"]["content"][0]["text"], std::string(1000, '[') + "\\\"{");
}

TEST_F(McpServerTest, EmptyAndBlankLinesAreIgnored) {
  EXPECT_FALSE(server.handle_line("").has_value());
  EXPECT_FALSE(server.handle_line("  \r").has_value());
  // A CRLF line is a message.
  EXPECT_EQ(send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r")["result"], json::object());
}

TEST_F(McpServerTest, BatchesAreRefusedUnlessVersion20250326WasNegotiated) {
  const std::string batch =
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}])";
  json r = send(batch);
  EXPECT_EQ(r["error"]["code"], kInvalidRequest);
  EXPECT_EQ(r["error"]["message"], "Invalid Request: batches are not supported before initialize");
  initialize("2025-11-25");
  r = send(batch);
  EXPECT_EQ(r["error"]["message"],
            "Invalid Request: batches are not supported in protocol version 2025-11-25");
  initialize("2025-06-18");
  EXPECT_EQ(send(batch)["error"]["code"], kInvalidRequest);
}

TEST_F(McpServerTest, BatchUnder20250326AnswersEachRequestInOneArray) {
  initialize("2025-03-26");
  json r = send(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},)"
      R"(7,)"
      R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}])");
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_EQ(r[1]["result"]["content"][0]["text"], "b");
  EXPECT_EQ(r[2]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(r[3]["error"]["message"], "Invalid Request: initialize must not be part of a batch");
  EXPECT_TRUE(server.initialized());
  // Only notifications: no answer. Empty: one error.
  EXPECT_TRUE(send(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])").is_null());
  EXPECT_EQ(send("[]")["error"]["message"], "Invalid Request: empty batch");
}

TEST_F(McpServerTest, ToolTextWithInvalidUtf8IsReplacedNotThrown) {
  ToolRegistry tools;
  tools.add({"bad", "", json::object(), [](const json&) {
               return ToolResult{"ok \xff end", false};
             }});
  McpServer s{ServerInfo{"s", "1", ""}, std::move(tools)};
  auto out =
      s.handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad"}})");
  ASSERT_TRUE(out);
  json r = json::parse(*out);
  EXPECT_EQ(r["result"]["content"][0]["text"], "ok \xEF\xBF\xBD end");
  // No instructions configured: none sent.
  out = s.handle_line(
      R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  EXPECT_FALSE(json::parse(*out)["result"].contains("instructions"));
}

TEST(SerializeLine, EqualsTheLibrarysCompactDumpOnOneLine) {
  json message = json::parse(R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text",
      "text":"{\n  \"status\": \"running\",\n  \"note\": \"caf\u00e9 \u0001\"\n}"}],
      "isError":false,"n":[-3,18446744073709551615,1.5,1e300,null,true,{}],"e":[]}})");
  message["result"]["bad"] = std::string("a\xff\"b\n");  // invalid UTF-8: replaced, as dump does
  const std::string line = serialize_line(message);
  EXPECT_EQ(line, message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

TEST(JsonDepth, CountsOnlyStructuralBrackets) {
  EXPECT_EQ(json_depth("{}", 10), 1u);
  EXPECT_EQ(json_depth(R"({"a":[{"b":"[[[["}]})", 10), 3u);
  EXPECT_EQ(json_depth(R"(["\"[[[", [1]])", 10), 2u);
  EXPECT_EQ(json_depth(std::string(1000, '['), 64), 65u) << "stops one past the limit";
}

}  // namespace
}  // namespace ctxkit::mcp
