#include "e2e/e2e_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ctxkit::test {

namespace {
std::map<std::string, std::string> to_map(const util::Env& env) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : env.vars()) m[k] = v;
  return m;
}
}  // namespace

std::string expected_version() {
  std::string v = read_file(CTXKIT_VERSION_FILE);
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

std::string bin_dir() {
  // CTXKIT_E2E_BIN_DIR runs the same cases against other builds (e.g. to see a case fail on the
  // build before a fix).
  if (const char* d = std::getenv("CTXKIT_E2E_BIN_DIR"); d && *d) return d;
  return CTXKIT_BIN_DIR;
}

util::ProcessResult run_tool(const std::string& name, const std::vector<std::string>& args,
                             const std::string& stdin_data, const util::Env& env,
                             const std::filesystem::path& cwd) {
  util::ProcessSpec spec;
  if (!cwd.empty()) spec.cwd = cwd;
  spec.argv.push_back(bin_dir() + "/" + name);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = to_map(env);
  spec.stdin_data = stdin_data;
  spec.timeout = std::chrono::seconds(60);
  auto r = util::run_process(spec);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : util::ProcessResult{};
}

util::ProcessResult run_tool_as_nobody(const std::string& name, const std::string& stdin_data,
                                       const util::Env& env) {
  // Only root can become another user; anyone else would run it as themselves, which is not the
  // case the callers test (they skip on -1).
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0)
    return util::ProcessResult{-1, "", "", false};
  util::ProcessSpec spec;
  spec.argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  spec.argv.push_back(bin_dir() + "/" + name);
  spec.env = to_map(env);
  spec.stdin_data = stdin_data;
  spec.timeout = std::chrono::seconds(60);
  auto r = util::run_process(spec);
  EXPECT_TRUE(r);
  return r ? *r : util::ProcessResult{};
}

RecordedSession::RecordedSession(size_t output_chars, const std::string& set) {
  namespace fs = std::filesystem;
  fs::path src = set.empty() ? fixtures() / kDefaultSet / "basic/transcripts"
                             : fixture_path(set, "basic/transcripts");
  const auto mains = main_transcripts(src);
  EXPECT_EQ(mains.size(), 1u) << src;
  id = mains.empty() ? std::string(kId) : mains[0].stem().string();
  dir = tmp / "home/.claude/projects/-proj";
  fs::create_directories(dir);
  transcript = dir / (id + ".jsonl");
  std::string text;
  for (size_t i = 0; text.size() < output_chars; ++i)
    text += "output line " + std::to_string(i) + " of a long command\n";
  std::string out;
  for (const auto& line : file_lines(src / (id + ".jsonl"))) {
    if (line.find("\"tool_result\"") != std::string::npos && output_chars > 0) {
      auto j = nlohmann::ordered_json::parse(line);
      const std::string type = j.value("type", "");
      if ((type == "user" || type == "api-request-blob") && j.contains("message") &&
          j["message"].is_object() && j["message"].contains("content") &&
          j["message"]["content"].is_array()) {
        for (auto& block : j["message"]["content"])
          if (block.is_object() && block.value("type", "") == "tool_result")
            block["content"] = text;
        out += j.dump() + "\n";
        continue;
      }
    }
    out += line + "\n";
  }
  std::ofstream(transcript) << out;
  original = out;
  if (fs::exists(src / id)) fs::copy(src / id, dir / id, fs::copy_options::recursive);
  env = tmp.env();
}

size_t line_count(const std::string& text) {
  size_t n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    if (nl > start) ++n;
    start = nl + 1;
  }
  return n;
}

std::optional<std::string> chromium() {
  if (auto p = std::getenv("CTXKIT_CHROMIUM")) return std::string(p);
  auto found = util::find_in_path("chromium", "/usr/local/bin:/usr/bin:/bin");
  if (!found) return std::nullopt;
  return *found;
}

util::ProcessResult run_browser(const std::string& browser, const TempDir& tmp,
                                std::vector<std::string> args) {
  std::vector<std::string> argv = {browser,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--hide-scrollbars",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--force-color-profile=srgb",
                                   "--force-device-scale-factor=1",
                                   "--user-data-dir=" + (tmp / "chromium-profile").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  util::ProcessSpec spec;
  spec.argv = argv;
  spec.env = std::map<std::string, std::string>{{"HOME", (tmp / "home").string()},
                                                {"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                                {"LANG", "C.UTF-8"}};
  spec.timeout = std::chrono::seconds(120);
  auto r = util::run_process(spec);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : util::ProcessResult{};
}

size_t occurrences(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

std::string assistant_line(const std::string& msg_id, int64_t cache_read,
                           const std::string& tool_id, bool sidechain) {
  nlohmann::json j;
  j["parentUuid"] = nullptr;
  j["isSidechain"] = sidechain;
  j["message"] = {{"id", msg_id},
                  {"model", "claude-sonnet-4-5"},
                  {"role", "assistant"},
                  {"content", nlohmann::json::array({{{"type", "tool_use"},
                                                      {"id", tool_id},
                                                      {"name", "Bash"},
                                                      {"input", {{"command", "ls"}}}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", cache_read}}}};
  j["type"] = "assistant";
  j["timestamp"] = "2026-11-21T12:00:00.000Z";
  return j.dump();
}

std::string standin_call_logger(int max_chars) {
  return "{ printf 'call:'; for a in \"$@\"; do printf ' [%s]' \"$(printf '%s' \"$a\" | tr '\\n' "
         "'~' | head -c " +
         std::to_string(max_chars) + ")\"; done; echo; } >> \"$STANDIN_LOG\"\n";
}

std::vector<std::string> standin_calls(const std::filesystem::path& log) {
  std::vector<std::string> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("call:")) out.push_back(line);
  return out;
}

}  // namespace ctxkit::test
