#include "util/json_io.hpp"

namespace ctxkit::util {
namespace {

template <class Json>
std::string dump(const Json& v, int indent, BadUtf8 bad) {
  return v.dump(
      indent, ' ', false,
      bad == BadUtf8::replace ? Json::error_handler_t::replace : Json::error_handler_t::strict);
}

}  // namespace

std::string dump_json(const nlohmann::json& v, int indent, BadUtf8 bad) {
  return dump(v, indent, bad);
}

std::string dump_json(const nlohmann::ordered_json& v, int indent, BadUtf8 bad) {
  return dump(v, indent, bad);
}

nlohmann::json parse_json(std::string_view text) {
  return nlohmann::json::parse(text, nullptr, false);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text) {
  return nlohmann::ordered_json::parse(text, nullptr, false);
}

nlohmann::json parse_json_or_throw(std::string_view text) {
  return nlohmann::json::parse(text);
}

nlohmann::ordered_json parse_ordered_json_or_throw(std::string_view text) {
  return nlohmann::ordered_json::parse(text);
}

const nlohmann::json* json_member(const nlohmann::json& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

}  // namespace ctxkit::util
