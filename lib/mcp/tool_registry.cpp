#include "mcp/tool_registry.hpp"

namespace ctxkit::mcp {

void ToolRegistry::add(Tool tool) {
  for (auto& t : tools_) {
    if (t.name == tool.name) {
      t = std::move(tool);
      return;
    }
  }
  tools_.push_back(std::move(tool));
}

const Tool* ToolRegistry::find(std::string_view name) const {
  for (const auto& t : tools_)
    if (t.name == name) return &t;
  return nullptr;
}

nlohmann::json ToolRegistry::list() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : tools_) {
    nlohmann::json entry = nlohmann::json::object();
    entry["name"] = t.name;
    entry["description"] = t.description;
    entry["inputSchema"] =
        t.input_schema.is_object() ? t.input_schema : nlohmann::json{{"type", "object"}};
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace ctxkit::mcp
