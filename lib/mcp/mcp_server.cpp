#include "mcp/mcp_server.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "mcp/json_rpc.hpp"
#include "util/json_io.hpp"

namespace ctxkit::mcp {

using json = nlohmann::json;

namespace {

constexpr std::string_view kBatchVersion = "2025-03-26";

bool valid_id(const json& id) {
  return id.is_string() || id.is_number();
}

std::string_view trim(std::string_view s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

json tool_result(std::string text, bool is_error) {
  json block = json::object();
  block["type"] = "text";
  block["text"] = std::move(text);
  json result = json::object();
  result["content"] = json::array({std::move(block)});
  result["isError"] = is_error;
  return result;
}

json error_text(const std::string& message) {
  return json{{"error", message}};
}

}  // namespace

McpServer::McpServer(ServerInfo info, ToolRegistry tools)
    : info_(std::move(info)), tools_(std::move(tools)) {}

void McpServer::log(std::string_view text) const {
  if (log_) log_(text);
}

std::string McpServer::oversized_message_error(std::size_t limit) const {
  return serialize_line(make_error(
      nullptr, kParseError, fmt::format("Parse error: message longer than {} bytes", limit)));
}

std::optional<std::string> McpServer::handle_line(std::string_view line) {
  try {
    line = trim(line);
    if (line.empty()) return std::nullopt;
    auto parsed = parse_message(line);
    if (!parsed) {
      log(fmt::format("<- unparsable message ({} bytes): {}", line.size(), parsed.error().message));
      return serialize_line(
          make_error(nullptr, kParseError, "Parse error: " + parsed.error().message));
    }
    if (parsed->is_array()) {
      if (protocol_version_ != kBatchVersion) {
        std::string why = protocol_version_.empty()
                              ? std::string("before initialize")
                              : fmt::format("in protocol version {}", protocol_version_);
        return serialize_line(
            make_error(nullptr, kInvalidRequest,
                       fmt::format("Invalid Request: batches are not supported {}", why)));
      }
      if (parsed->empty())
        return serialize_line(make_error(nullptr, kInvalidRequest, "Invalid Request: empty batch"));
      json answers = json::array();
      for (const auto& message : *parsed)
        if (auto answer = handle_message(message, true)) answers.push_back(std::move(*answer));
      if (answers.empty()) return std::nullopt;
      return serialize_line(answers);
    }
    auto answer = handle_message(*parsed, false);
    if (!answer) return std::nullopt;
    return serialize_line(*answer);
  } catch (const std::exception& e) {
    return serialize_line(
        make_error(nullptr, kInternalError, fmt::format("Internal error: {}", e.what())));
  }
}

std::optional<json> McpServer::handle_message(const json& message, bool in_batch) {
  if (!message.is_object())
    return make_error(nullptr, kInvalidRequest, "Invalid Request: a message must be a JSON object");
  const json* id_p = util::json_member(message, "id");
  const bool has_id = id_p != nullptr;
  if (has_id && !valid_id(*id_p))
    return make_error(nullptr, kInvalidRequest, "Invalid Request: id must be a string or a number");
  const json id = has_id ? *id_p : json(nullptr);
  const json* method_p = util::json_member(message, "method");
  if (!method_p && (message.contains("result") || message.contains("error"))) {
    log("<- a response (ignored: this server sends no requests)");
    return std::nullopt;
  }
  const json* version = util::json_member(message, "jsonrpc");
  if (!version || *version != "2.0")
    return make_error(id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  if (!method_p || !method_p->is_string())
    return make_error(id, kInvalidRequest, "Invalid Request: method must be a string");
  const std::string method = method_p->get<std::string>();
  const json* params = util::json_member(message, "params");
  if (params && !params->is_object() && !params->is_array())
    return make_error(id, kInvalidRequest, "Invalid Request: params must be an object or an array");

  if (!has_id) {
    if (log_) log(fmt::format("<- notification {}", method));
    if (method == "notifications/initialized") initialized_ = true;
    return std::nullopt;  // notifications are never answered, known or not
  }
  if (in_batch && method == "initialize")
    return make_error(id, kInvalidRequest,
                      "Invalid Request: initialize must not be part of a batch");
  if (log_) log(fmt::format("<- {} id={}", method, util::dump_json(id)));
  try {
    return handle_request(method, id, params);
  } catch (const std::exception& e) {
    return make_error(id, kInternalError, fmt::format("Internal error: {}", e.what()));
  }
}

json McpServer::handle_request(const std::string& method, const json& id, const json* params) {
  const bool params_object = params == nullptr || params->is_object();
  if (method == "initialize") {
    if (!params || !params->is_object())
      return make_error(id, kInvalidParams,
                        "Invalid params: initialize needs an object with protocolVersion");
    auto v = params->find("protocolVersion");
    if (v == params->end() || !v->is_string())
      return make_error(id, kInvalidParams, "Invalid params: protocolVersion must be a string");
    const std::string asked = v->get<std::string>();
    const bool known = std::find(kProtocolVersions.begin(), kProtocolVersions.end(), asked) !=
                       kProtocolVersions.end();
    protocol_version_ = known ? asked : std::string(kProtocolVersions.front());
    json result = json::object();
    result["protocolVersion"] = protocol_version_;
    result["capabilities"] = json{{"tools", json{{"listChanged", false}}}};
    result["serverInfo"] = json{{"name", info_.name}, {"version", info_.version}};
    if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
    return make_result(id, std::move(result));
  }
  if (method == "ping") return make_result(id, json::object());
  if (method == "tools/list") {
    if (!params_object)
      return make_error(id, kInvalidParams, "Invalid params: tools/list takes an object");
    return make_result(id, json{{"tools", tools_.list()}});
  }
  if (method == "tools/call") {
    if (!params || !params->is_object())
      return make_error(id, kInvalidParams, "Invalid params: tools/call needs an object with name");
    auto name_it = params->find("name");
    if (name_it == params->end() || !name_it->is_string())
      return make_error(id, kInvalidParams, "Invalid params: tools/call name must be a string");
    const std::string name = name_it->get<std::string>();
    json arguments = json::object();
    if (auto a = params->find("arguments"); a != params->end() && !a->is_null()) {
      if (!a->is_object())
        return make_error(id, kInvalidParams, "Invalid params: arguments must be an object");
      arguments = *a;
    }
    const Tool* tool = tools_.find(name);
    if (!tool)
      return make_result(id,
                         tool_result(util::dump_json(error_text("Unknown tool: " + name)), true));
    ToolResult r;
    try {
      r = tool->handler(arguments);
    } catch (const std::exception& e) {
      r = ToolResult{util::dump_json(error_text(e.what())), true};
    }
    if (log_)
      log(fmt::format("-> {} {}{}", name, r.text.size(), r.is_error ? " bytes, error" : " bytes"));
    return make_result(id, tool_result(std::move(r.text), r.is_error));
  }
  return make_error(id, kMethodNotFound, "Method not found: " + method);
}

}  // namespace ctxkit::mcp
