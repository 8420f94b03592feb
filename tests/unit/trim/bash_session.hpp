#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ctxkit::test {

// A transcript of `results` Bash calls in session `session`, each answered by 6,000 characters;
// `assistant_extra`'s fields are added to every assistant line (cwd, timestamp, ...).
inline std::string bash_session_lines(
    int results, const std::string& session,
    const nlohmann::json& assistant_extra = nlohmann::json::object()) {
  using json = nlohmann::json;
  std::string out;
  for (int i = 0; i < results; ++i) {
    std::string id = "toolu_" + std::to_string(i);
    json u = {{"type", "assistant"},
              {"uuid", "a" + std::to_string(i)},
              {"sessionId", session},
              {"message",
               {{"id", "m" + std::to_string(i)},
                {"role", "assistant"},
                {"content", json::array({{{"type", "tool_use"},
                                          {"id", id},
                                          {"name", "Bash"},
                                          {"input", {{"command", "seq 5000"}}}}})}}}};
    u.update(assistant_extra);
    json r = {{"type", "user"},
              {"uuid", "r" + std::to_string(i)},
              {"sessionId", session},
              {"message",
               {{"role", "user"},
                {"content", json::array({{{"type", "tool_result"},
                                          {"tool_use_id", id},
                                          {"content", std::string(6000, 'z')}}})}}}};
    out += u.dump() + "\n" + r.dump() + "\n";
  }
  return out;
}

}  // namespace ctxkit::test
