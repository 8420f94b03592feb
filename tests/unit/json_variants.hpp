#pragma once

// Rewrites of recorded JSON that a reader of the client's output must take as the same data: the
// client may reorder keys, space its tokens or add keys in any release.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::test {

enum class JsonVariant { Reordered, Spaced, Extended };

inline std::vector<JsonVariant> all_json_variants() {
  return {JsonVariant::Reordered, JsonVariant::Spaced, JsonVariant::Extended};
}

inline const char* variant_name(JsonVariant v) {
  switch (v) {
    case JsonVariant::Reordered:
      return "Reordered";
    case JsonVariant::Spaced:
      return "Spaced";
    case JsonVariant::Extended:
      return "Extended";
  }
  return "?";
}

namespace detail {
using ojson = nlohmann::ordered_json;

// Every object's keys in reverse order, at every depth.
inline ojson reversed(const ojson& j) {
  if (j.is_array()) {
    ojson out = ojson::array();
    for (const auto& e : j) out.push_back(reversed(e));
    return out;
  }
  if (!j.is_object()) return j;
  ojson out = ojson::object();
  std::vector<std::pair<std::string, const ojson*>> items;
  for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(it.key(), &it.value());
  for (auto it = items.rbegin(); it != items.rend(); ++it) out[it->first] = reversed(*it->second);
  return out;
}

// Unknown keys added to every object, first and last.
inline ojson extended(const ojson& j) {
  if (j.is_array()) {
    ojson out = ojson::array();
    for (const auto& e : j) out.push_back(extended(e));
    return out;
  }
  if (!j.is_object()) return j;
  ojson out = ojson::object();
  out["zz_new_first"] = ojson{{"type", "result"}, {"nested", {1, "system", nullptr}}};
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = extended(it.value());
  out["zz_new_last"] = "unknown";
  return out;
}
}  // namespace detail

// One JSON line rewritten; a line that is not JSON is returned unchanged.
inline std::string json_variant(std::string_view line, JsonVariant v) {
  auto j = detail::ojson::parse(line, nullptr, false);
  if (j.is_discarded()) return std::string(line);
  switch (v) {
    case JsonVariant::Reordered:
      return detail::reversed(j).dump();
    case JsonVariant::Spaced: {
      // Indented output on one line: a newline can only stand between tokens (inside strings it
      // is escaped), so each becomes a space, and ": " and ", " come from the indentation.
      std::string s = j.dump(1);
      for (char& c : s)
        if (c == '\n') c = ' ';
      return "  " + s + " \t";
    }
    case JsonVariant::Extended:
      return detail::extended(j).dump();
  }
  return std::string(line);
}

// Every line of a JSON-lines text rewritten.
inline std::string jsonl_variant(std::string_view text, JsonVariant v) {
  std::string out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    out += json_variant(text.substr(0, nl), v);
    if (nl == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace ctxkit::test
