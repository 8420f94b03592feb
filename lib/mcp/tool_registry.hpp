#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::mcp {

// What a tool answers: the text the model reads (JSON text for the workflow tools) and whether
// it is a tool error (`isError`), which the client shows to the model as a failed call.
struct ToolResult {
  std::string text;
  bool is_error = false;
};

// One tool: its name, description and JSON Schema for `tools/list`, and the handler that
// `tools/call` runs with the call's `arguments` (always an object). A handler reports bad
// arguments as a ToolResult with is_error, never by throwing; an exception that escapes is
// turned into a tool error by the server.
struct Tool {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
  std::function<ToolResult(const nlohmann::json& arguments)> handler;
};

// The tools a server offers, in the order they were added.
class ToolRegistry {
 public:
  // Adds `tool`; a later tool of the same name replaces the earlier one in place.
  void add(Tool tool);
  // The tool named `name`, or nullptr.
  const Tool* find(std::string_view name) const;
  // The `tools` array of a `tools/list` result.
  nlohmann::json list() const;
  bool empty() const { return tools_.empty(); }

 private:
  std::vector<Tool> tools_;
};

}  // namespace ctxkit::mcp
