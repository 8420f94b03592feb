#include "transcript_gen.hpp"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

namespace ctxkit::bench {

namespace {
using json = nlohmann::ordered_json;

std::string uuid(std::mt19937_64& rng) {
  uint64_t a = rng(), b = rng();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                     0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffffULL);
}

std::string filler(std::mt19937_64& rng, size_t n) {
  static const char* words[] = {"alpha", "beta", "gamma", "delta", "src/engine.c:42", "error:", "return", "0x1f",
                                "TODO", "function", "const", "int", "std::string", "=>", "{", "}", "\n"};
  std::string s;
  s.reserve(n + 16);
  while (s.size() < n) {
    s += words[rng() % (sizeof(words) / sizeof(words[0]))];
    s += ' ';
  }
  s.resize(n);
  return s;
}
}  // namespace

GeneratedTranscript generate_transcript(const std::filesystem::path& path, uint64_t target_bytes,
                                        int final_percent, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  GeneratedTranscript g;
  g.session_id = uuid(rng);
  const std::string cwd = "/home/user/project";
  std::string parent;
  int64_t context = 20000;
  int turn = 0;
  // The fields every message line ends with, in the client's order.
  auto head = [&](json& j, bool with_prompt = false) {
    j["parentUuid"] = parent.empty() ? json(nullptr) : json(parent);
    j["isSidechain"] = false;
    if (with_prompt) j["promptId"] = "prompt-0001";
  };
  auto tail = [&](json& j) {
    std::string id = uuid(rng);
    j["uuid"] = id;
    j["timestamp"] = fmt::format("2026-11-21T{:02}:{:02}:{:02}.{:03}Z", (turn / 3600) % 24, (turn / 60) % 60, turn % 60, turn % 1000);
    parent = id;
  };
  auto env_fields = [&](json& j) {
    j["userType"] = "external";
    j["entrypoint"] = "cli";
    j["cwd"] = cwd;
    j["sessionId"] = g.session_id;
    j["version"] = "2.1.197";
    j["gitBranch"] = "main";
  };
  auto write = [&](const json& j) {
    std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
    out << line << '\n';
    g.bytes += line.size() + 1;
  };
  auto assistant_response = [&](int64_t ctx_tokens, const std::string& tool_id, const std::string& text) {
    std::string msg_id = "msg_" + uuid(rng).substr(0, 24);
    json usage = {{"input_tokens", 5}, {"cache_creation_input_tokens", 1200}, {"cache_read_input_tokens", ctx_tokens - 1205},
                  {"output_tokens", 180}, {"server_tool_use", {{"web_search_requests", 0}, {"web_fetch_requests", 0}}},
                  {"service_tier", "standard"}};
    auto line = [&](const json& block) {
      json a;
      head(a);
      a["message"] = {{"id", msg_id}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-5"},
                      {"content", json::array({block})}, {"stop_reason", "tool_use"}, {"stop_sequence", nullptr}, {"usage", usage}};
      a["requestId"] = "req_" + msg_id.substr(4);
      a["type"] = "assistant";
      tail(a);
      env_fields(a);
      write(a);
    };
    line(json{{"type", "text"}, {"text", text}});
    line(json{{"type", "tool_use"}, {"id", tool_id}, {"name", "Bash"},
              {"input", {{"command", "make test"}, {"description", "run the tests"}}}});
  };
  std::uniform_real_distribution<double> u01(0, 1);
  const int64_t usable = 167000;
  while (g.bytes < target_bytes) {
    ++turn;
    if (turn % 40 == 1) {
      json q = {{"type", "queue-operation"}, {"operation", "enqueue"}, {"timestamp", "2026-11-21T00:00:00.000Z"},
                {"sessionId", g.session_id}, {"content", filler(rng, 80)}};
      write(q);
      json up;
      head(up, true);
      up["type"] = "user";
      up["message"] = {{"role", "user"}, {"content", filler(rng, 200 + rng() % 800)}};
      tail(up);
      env_fields(up);
      write(up);
    }
    std::string tool_id = fmt::format("toolu_{:024x}", rng() & 0xffffffffffffffULL);
    context += 800 + static_cast<int64_t>(rng() % 3000);
    if (context > usable - 2000) {
      json b;
      b["parentUuid"] = nullptr;
      b["logicalParentUuid"] = parent;
      b["isSidechain"] = false;
      b["type"] = "system";
      b["subtype"] = "compact_boundary";
      b["content"] = "Conversation compacted";
      tail(b);
      b["compactMetadata"] = {{"trigger", "auto"}, {"preTokens", context}, {"postTokens", 9000}};
      env_fields(b);
      write(b);
      json sm;
      head(sm, true);
      sm["type"] = "user";
      sm["message"] = {{"role", "user"}, {"content", "This session is being continued from a previous conversation. " + filler(rng, 3000)}};
      sm["isVisibleInTranscriptOnly"] = true;
      sm["isCompactSummary"] = true;
      tail(sm);
      env_fields(sm);
      write(sm);
      context = 20000;
    }
    assistant_response(context, tool_id, filler(rng, 60 + rng() % 300));
    if (u01(rng) < 0.3) {
      json p;
      head(p);
      p["type"] = "progress";
      p["data"] = {{"type", "bash_progress"}, {"output", filler(rng, 200 + rng() % 2000)}};
      p["toolUseID"] = tool_id;
      tail(p);
      env_fields(p);
      write(p);
    }
    double r = u01(rng);
    size_t size = r < 0.70 ? 100 + rng() % 1900 : r < 0.95 ? 2000 + rng() % 18000 : 50000 + rng() % 450000;
    std::string output = filler(rng, size);
    if (u01(rng) < 0.02) {
      // A rare identifier, as in a real error message.
      std::string sym = fmt::format("sym_{:012x}", rng() & 0xffffffffffffULL);
      output += fmt::format("\nld: undefined reference to `{}'", sym);
      if (g.rare_tokens.size() < 50) g.rare_tokens.push_back(sym);
    }
    std::string assistant_uuid = parent;
    json res;
    head(res, true);
    res["type"] = "user";
    if (u01(rng) < 0.8) {
      res["message"] = {{"role", "user"}, {"content", json::array({{{"tool_use_id", tool_id}, {"type", "tool_result"}, {"content", output}, {"is_error", false}}})}};
    } else {
      res["message"] = {{"role", "user"}, {"content", json::array({{{"tool_use_id", tool_id}, {"type", "tool_result"},
                                                                    {"content", json::array({{{"type", "text"}, {"text", output}}})}}})}};
    }
    tail(res);
    res["toolUseResult"] = {{"stdout", output}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}, {"noOutputExpected", false}};
    res["sourceToolAssistantUUID"] = assistant_uuid;
    env_fields(res);
    write(res);
    if (u01(rng) < 0.2) {
      json at;
      head(at);
      at["attachment"] = {{"type", "hook_success"}, {"content", ""}, {"stdout", filler(rng, 100)}, {"exitCode", 0}};
      at["type"] = "attachment";
      tail(at);
      env_fields(at);
      write(at);
    }
  }
  ++turn;
  g.last_context_tokens = usable * final_percent / 100 + 100;
  g.last_tool_use_id = "toolu_bench_last_call_000000001";
  assistant_response(g.last_context_tokens, g.last_tool_use_id, "Running the final step.");
  return g;
}

}  // namespace ctxkit::bench
