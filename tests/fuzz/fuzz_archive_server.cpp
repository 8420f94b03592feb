// ctx-archive-mcp's JSON-RPC handling: each input is one line from the client, handed to the
// archive's server (apps/archive_server: the tools' dispatch and argument checks, answering from
// a small archive). Every answer is one line of JSON-RPC 2.0; a tool never throws (its errors
// are its own one-line texts) and never names the state folder; what a tool answers without an
// error is JSON.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/archive_server.hpp"
#include "archive/recall.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"

namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kSession = "6a0e7c7e-0b1c-4d2e-9f30-1a2b3c4d5e6f";

std::string line(const std::string& role, const json& content, int n) {
  return json{{"type", role == "assistant" ? "assistant" : "user"},
              {"sessionId", kSession},
              {"cwd", "/home/me/app"},
              {"uuid", "u" + std::to_string(n)},
              {"timestamp", "2026-11-20T10:00:0" + std::to_string(n % 10) + ".000Z"},
              {"message", {{"role", role}, {"content", content}}}}
             .dump() +
         "\n";
}

struct Fixture {
  fs::path dir;
  std::unique_ptr<ctxkit::archive::ArchiveRecall> recall;
  std::unique_ptr<ctxkit::mcp::McpServer> server;
  Fixture() {
    char tmpl[] = "/tmp/fuzz_archive_server.XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    dir = tmpl;
    ctxkit::util::Env env;
    env.set("HOME", (dir / "home").string());
    const auto loc = ctxkit::core::Locations::resolve(env, (dir / "state").string());
    const fs::path project = loc.archive_dir() / "-home-me-app";
    fs::create_directories(project / kSession / "subagents");
    std::ofstream(project / (std::string(kSession) + ".jsonl"))
        << line("user", "deploy the gateway", 1)
        << line("assistant",
                json::array({{{"type", "tool_use"},
                              {"id", "t1"},
                              {"name", "Bash"},
                              {"input", {{"command", "make deploy"}}}}}),
                2)
        << line("user",
                json::array({{{"type", "tool_result"},
                              {"tool_use_id", "t1"},
                              {"content", "token ZEBRA_QUARTZ_5521 rejected by the gateway"}}}),
                3)
        << "{\"type\":\"system\",\"subtype\":\"x\"}\n"
        << line("assistant", json::array({{{"type", "text"}, {"text", "caf\xc3\xa9 engine.c:42"}}}),
                5);
    std::ofstream(project / kSession / "subagents/agent-a12aac722b824f25d.jsonl")
        << line("user", "review task", 1) << line("user", "found WOMBAT_SENTINEL_99", 2);
    recall = std::make_unique<ctxkit::archive::ArchiveRecall>(loc, ctxkit::core::ArchiveConfig{});
    server = std::make_unique<ctxkit::mcp::McpServer>(ctxkit::apps::archive_server(*recall, "0"));
    (void)server->handle_line(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
    (void)server->handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  ~Fixture() {
    server.reset();
    recall.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void check_answer(const json& a, const std::string& state) {
  if (!a.is_object() || a.value("jsonrpc", "") != "2.0") std::abort();
  if (a.contains("error")) {
    if (a["error"].value("code", 0) == -32603) std::abort();  // an internal error: a bug
    return;
  }
  const json& result = a.at("result");
  if (!result.contains("content")) return;
  const std::string text = result.at("content").at(0).at("text").get<std::string>();
  if (text.find(state) != std::string::npos) std::abort();
  if (result.value("isError", false)) {
    // The tools' own errors are one line of text; {"error": …} is a handler that threw.
    if (text.find('\n') != std::string::npos) std::abort();
    auto thrown = json::parse(text, nullptr, false);
    if (thrown.is_object() && thrown.contains("error") &&
        !(thrown["error"].is_string() &&
          thrown["error"].get<std::string>().rfind("Unknown tool: ", 0) == 0))
      std::abort();
    return;
  }
  if (json::parse(text, nullptr, false).is_discarded()) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.find('\n') != std::string_view::npos) return 0;  // the transport's lines have none
  auto out = fixture.server->handle_line(input);
  if (!out) return 0;
  if (out->empty() || out->back() != '\n' || out->find('\n') != out->size() - 1) std::abort();
  json answer = json::parse(*out, nullptr, false);
  if (answer.is_discarded()) std::abort();
  const std::string state = (fixture.dir / "state").string();
  if (answer.is_array()) {
    for (const auto& a : answer) check_answer(a, state);
  } else {
    check_answer(answer, state);
  }
  return 0;
}
