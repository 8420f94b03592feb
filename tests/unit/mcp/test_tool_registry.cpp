#include <gtest/gtest.h>

#include "mcp/tool_registry.hpp"

namespace ctxkit::mcp {
namespace {
using json = nlohmann::json;

Tool tool(const std::string& name, const std::string& answer, json schema = json()) {
  return {name, "says " + answer, std::move(schema), [answer](const json&) {
            return ToolResult{answer, false};
          }};
}

TEST(ToolRegistry, ListsToolsInTheOrderAddedAndFindsThemByName) {
  ToolRegistry r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.list(), json::array());
  r.add(tool("b_tool", "B", {{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}}));
  r.add(tool("a_tool", "A"));
  EXPECT_FALSE(r.empty());
  const json list = r.list();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "b_tool");
  EXPECT_EQ(list[0]["description"], "says B");
  EXPECT_EQ(list[0]["inputSchema"]["properties"]["x"]["type"],
            "string");  // the schema given, whole
  EXPECT_EQ(list[1]["name"], "a_tool");
  ASSERT_NE(r.find("a_tool"), nullptr);
  EXPECT_EQ(r.find("a_tool")->handler(json::object()).text, "A");
  EXPECT_EQ(r.find("c_tool"), nullptr);
  EXPECT_EQ(r.find("A_TOOL"), nullptr);  // names are exact
  EXPECT_EQ(r.find(""), nullptr);
}

TEST(ToolRegistry, ADuplicateNameReplacesTheEarlierToolInPlace) {
  ToolRegistry r;
  r.add(tool("first", "1"));
  r.add(tool("dup", "old"));
  r.add(tool("last", "3"));
  r.add(tool("dup", "new"));
  const json list = r.list();
  ASSERT_EQ(list.size(), 3u);  // not added twice
  EXPECT_EQ(list[1]["name"], "dup");
  EXPECT_EQ(list[1]["description"], "says new");
  EXPECT_EQ(r.find("dup")->handler(json::object()).text, "new");
}

TEST(ToolRegistry, AToolWithoutAnObjectSchemaListsTheEmptyObjectSchema) {
  ToolRegistry r;
  r.add(tool("none", "n"));                        // no schema
  r.add(tool("array", "a", json::array({1, 2})));  // not an object
  r.add(tool("text", "t", "object"));
  for (const auto& entry : r.list())
    EXPECT_EQ(entry["inputSchema"], json({{"type", "object"}})) << entry.dump();
}

}  // namespace
}  // namespace ctxkit::mcp
