#include "transcript_gen.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

namespace ctxkit::bench {

namespace {
using json = nlohmann::ordered_json;

std::string uuid(std::mt19937_64& rng) {
  uint64_t a = rng(), b = rng();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                     0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffffULL);
}

// Words of generated text: the common words the search benchmark asks for first, then a few
// thousand pseudo-words, identifiers, paths and numbers, drawn with a Zipf law (as words of real
// text and code are), so that an index of it is as large as one of real sessions.
struct Vocabulary {
  std::vector<std::string> words;
  std::vector<uint16_t> table;  // 65536 slots: a uniform 16-bit draw -> a word, by weight 1/rank
  Vocabulary() {
    for (const char* w : {"the",
                          "function",
                          "return",
                          "const",
                          "int",
                          "error:",
                          "alpha",
                          "beta",
                          "gamma",
                          "delta",
                          "src/engine.c:42",
                          "std::string",
                          "TODO",
                          "0x1f",
                          "=>",
                          "{",
                          "}",
                          "\n",
                          "if",
                          "for"})
      words.emplace_back(w);
    std::mt19937_64 rng(7);
    const char* syll[] = {"ka", "ro", "mi", "te", "su",  "na", "lo", "vi",
                          "de", "pa", "xe", "zu", "qui", "bo", "fa", "gri"};
    while (words.size() < 6000) {
      std::string w;
      int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) w += syll[rng() % 16];
      switch (rng() % 8) {
        case 0:
          w = "src/" + w + ".cpp:" + std::to_string(rng() % 900 + 1);
          break;
        case 1:
          w += "_" + std::to_string(rng() % 100);
          break;
        case 2:
          w = std::to_string(rng() % 100000);
          break;
        default:
          break;
      }
      words.push_back(w);
    }
    std::vector<double> cum;
    double total = 0;
    for (size_t r = 0; r < words.size(); ++r)
      cum.push_back(total += 1.0 / static_cast<double>(r + 1));
    table.resize(65536);
    size_t w = 0;
    for (size_t i = 0; i < table.size(); ++i) {
      double at = (static_cast<double>(i) + 0.5) / 65536.0 * total;
      while (cum[w] < at) ++w;
      table[i] = static_cast<uint16_t>(w);
    }
  }
};

std::string filler(std::mt19937_64& rng, size_t n) {
  static const Vocabulary vocab;
  std::string s;
  s.reserve(n + 32);
  while (s.size() < n) {
    uint64_t r = rng();
    for (int k = 0; k < 3 && s.size() < n; ++k, r >>= 16) {
      s += vocab.words[vocab.table[r & 0xffff]];
      s += ' ';
    }
  }
  s.resize(n);
  return s;
}

std::string base64(std::mt19937_64& rng, size_t n) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string s(n, 'A');
  for (size_t i = 0; i < n; ++i) s[i] = abc[rng() & 63];
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
    j["timestamp"] = fmt::format("2026-11-21T{:02}:{:02}:{:02}.{:03}Z", (turn / 3600) % 24,
                                 (turn / 60) % 60, turn % 60, turn % 1000);
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
  auto assistant_response =
      [&](int64_t ctx_tokens, const std::string& tool_id, const std::string& text,
          const std::string& tool = "Bash",
          const json& input = json{{"command", "make test"}, {"description", "run the tests"}}) {
        std::string msg_id = "msg_" + uuid(rng).substr(0, 24);
        json usage = {{"input_tokens", 5},
                      {"cache_creation_input_tokens", 1200},
                      {"cache_read_input_tokens", ctx_tokens - 1205},
                      {"output_tokens", 180},
                      {"server_tool_use", {{"web_search_requests", 0}, {"web_fetch_requests", 0}}},
                      {"service_tier", "standard"}};
        // One content block per line, all lines of a response sharing message.id and usage.
        auto line = [&](const json& block) {
          json a;
          head(a);
          a["message"] = {{"id", msg_id},
                          {"type", "message"},
                          {"role", "assistant"},
                          {"model", "claude-sonnet-4-5"},
                          {"content", json::array({block})},
                          {"stop_reason", "tool_use"},
                          {"stop_sequence", nullptr},
                          {"usage", usage}};
          a["requestId"] = "req_" + msg_id.substr(4);
          a["type"] = "assistant";
          tail(a);
          env_fields(a);
          write(a);
        };
        line(json{{"type", "text"}, {"text", text}});
        line(json{{"type", "tool_use"}, {"id", tool_id}, {"name", tool}, {"input", input}});
      };
  std::uniform_real_distribution<double> u01(0, 1);
  // Tool-result bodies: log-normal around a 2 KiB median, 1.5% between 50 and 256 KiB.
  std::lognormal_distribution<double> body(std::log(2048.0), 1.1);
  const int64_t usable = 167000;
  const uint64_t half = target_bytes / 2;
  bool compacted = false;
  uint64_t since_compaction = 0, compaction_bytes = 0;
  // Images: a few per 100 MB (base64 of 30-400 KiB), placed at fixed fractions of the file.
  std::vector<uint64_t> image_at;
  for (uint64_t at = 0; at < target_bytes; at += 17ull << 20)
    image_at.push_back(at + (rng() % (8ull << 20)));
  size_t next_image = 0;
  static const char* kTools[] = {"Bash", "Bash", "Bash", "Read", "Read", "Grep", "Glob", "Edit"};
  while (g.bytes < target_bytes) {
    ++turn;
    if (turn % 40 == 1) {
      json q = {{"type", "queue-operation"},
                {"operation", "enqueue"},
                {"timestamp", "2026-11-21T00:00:00.000Z"},
                {"sessionId", g.session_id},
                {"content", filler(rng, 80)}};
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
    // The context grows with the file: one automatic compaction, in the middle.
    since_compaction = g.bytes - compaction_bytes;
    uint64_t span = compacted ? target_bytes - compaction_bytes : half;
    int64_t context =
        20000 + static_cast<int64_t>(static_cast<double>(usable - 26000) *
                                     static_cast<double>(since_compaction) /
                                     static_cast<double>(std::max<uint64_t>(span, 1)));
    context = std::min(context, usable - 3000);
    if (!compacted && g.bytes >= half) {
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
      sm["message"] = {
          {"role", "user"},
          {"content",
           "This session is being continued from a previous conversation. " + filler(rng, 6000)}};
      sm["isVisibleInTranscriptOnly"] = true;
      sm["isCompactSummary"] = true;
      tail(sm);
      env_fields(sm);
      write(sm);
      compacted = true;
      compaction_bytes = g.bytes;
      context = 20000;
    }
    const bool image = next_image < image_at.size() && g.bytes >= image_at[next_image];
    const std::string tool = image ? "Read" : kTools[rng() % 8];
    json input = tool == "Bash"   ? json{{"command", filler(rng, 20 + rng() % 60)},
                                       {"description", filler(rng, 30)}}
                 : tool == "Edit" ? json{{"file_path", "/home/user/project/src/engine.c"},
                                         {"old_string", filler(rng, 100 + rng() % 400)},
                                         {"new_string", filler(rng, 100 + rng() % 400)}}
                                  : json{{"file_path", image ? "/home/user/project/docs/screen.png"
                                                             : "/home/user/project/src/engine.c"}};
    assistant_response(context, tool_id, filler(rng, 60 + rng() % 300), tool, input);
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
    std::string assistant_uuid = parent;
    json res;
    head(res, true);
    res["type"] = "user";
    if (image) {
      ++next_image;
      std::string data = base64(rng, (30u << 10) + rng() % (370u << 10));
      res["message"] = {
          {"role", "user"},
          {"content", json::array({{{"tool_use_id", tool_id},
                                    {"type", "tool_result"},
                                    {"content", json::array({{{"type", "image"},
                                                              {"source",
                                                               {{"type", "base64"},
                                                                {"media_type", "image/png"},
                                                                {"data", data}}}}})}}})}};
      tail(res);
      res["toolUseResult"] = {
          {"type", "image"},
          {"file",
           {{"base64", data}, {"type", "image/png"}, {"originalSize", data.size() * 3 / 4}}}};
    } else {
      size_t size = u01(rng) < 0.015
                        ? (50u << 10) + rng() % (206u << 10)
                        : static_cast<size_t>(std::clamp(body(rng), 20.0, 48.0 * 1024));
      std::string output = filler(rng, size);
      if (u01(rng) < 0.02) {
        // A rare identifier, as in a real error message.
        std::string sym = fmt::format("sym_{:012x}", rng() & 0xffffffffffffULL);
        output += fmt::format("\nld: undefined reference to `{}'", sym);
        if (g.rare_tokens.size() < 50) g.rare_tokens.push_back(sym);
      }
      if (u01(rng) < 0.8) {
        res["message"] = {{"role", "user"},
                          {"content", json::array({{{"tool_use_id", tool_id},
                                                    {"type", "tool_result"},
                                                    {"content", output},
                                                    {"is_error", false}}})}};
      } else {
        res["message"] = {
            {"role", "user"},
            {"content",
             json::array({{{"tool_use_id", tool_id},
                           {"type", "tool_result"},
                           {"content", json::array({{{"type", "text"}, {"text", output}}})}}})}};
      }
      tail(res);
      if (tool == "Bash")
        res["toolUseResult"] = {{"stdout", output},
                                {"stderr", ""},
                                {"interrupted", false},
                                {"isImage", false},
                                {"noOutputExpected", false}};
      else
        res["toolUseResult"] = {
            {"type", "text"},
            {"file", {{"filePath", "/home/user/project/src/engine.c"}, {"content", output}}}};
    }
    res["sourceToolAssistantUUID"] = assistant_uuid;
    env_fields(res);
    write(res);
    if (u01(rng) < 0.2) {
      json at;
      head(at);
      at["attachment"] = {
          {"type", "hook_success"}, {"content", ""}, {"stdout", filler(rng, 100)}, {"exitCode", 0}};
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
