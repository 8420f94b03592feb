// ctx-cap as the client runs it: the recorded PostToolUse payloads of every supported release
// (Bash, a Bash over the client's own limit, MCP), what it answers and archives, the handle that
// gets the rest back, and hostile cases (a huge output, NUL, ill-formed UTF-8 at the cut, a
// tool_use_id with path characters, a read-only archive, a full disk, an excluded project): the
// output is capped correctly or passed unchanged, one stderr line where something failed, exit 0.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "archive/output_archive.hpp"
#include "core/locations.hpp"
#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

json recorded(const std::string& version, const std::string& name) {
  return json::parse(read_file(fixture_root() / version / "cap" / "payloads" / (name + ".json")));
}

fs::path outputs(const TempDir& tmp) {
  return tmp / "home/.local/state/ctxkit/archive/tool-outputs";
}

// The replacement a run answered (null when it answered nothing).
json replacement(const util::ProcessResult& r) {
  if (r.out.empty()) return nullptr;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "PostToolUse");
  return j["hookSpecificOutput"]["updatedToolOutput"];
}

json bash_payload(const std::string& stdout_text, const std::string& id = "toolu_e2e") {
  return {{"session_id", "s-e2e"},
          {"transcript_path", "/nowhere/s-e2e.jsonl"},
          {"cwd", "/home/me/app"},
          {"hook_event_name", "PostToolUse"},
          {"tool_name", "Bash"},
          {"tool_input", {{"command", "make test"}}},
          {"tool_response",
           {{"stdout", stdout_text},
            {"stderr", ""},
            {"interrupted", false},
            {"isImage", false},
            {"noOutputExpected", false}}},
          {"tool_use_id", id}};
}

std::string numbered(int n, const std::string& prefix) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += prefix + std::to_string(i) + "\n";
  return out;
}

std::string version_name(const ::testing::TestParamInfo<std::string>& param) {
  return fixture_set_name(param.param);
}

class CapRecorded : public ::testing::TestWithParam<std::string> {};

TEST_P(CapRecorded, BashOverTheThresholdIsCappedAndArchivedWhole) {
  TempDir tmp;
  const json p = recorded(GetParam(), "bash_12k");
  const std::string original = p["tool_response"]["stdout"];
  auto r = run_tool("ctx-cap", {}, p.dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json out = replacement(r);
  ASSERT_TRUE(out.is_object()) << r.out;
  const std::string preview = out["stdout"];
  EXPECT_TRUE(preview.starts_with("BASHMID 1\nBASHMID 2\n")) << preview;
  EXPECT_TRUE(preview.ends_with("BASHMID 999\nBASHMID 1000")) << preview;
  EXPECT_LT(preview.size(), 3500u);
  EXPECT_EQ(out["interrupted"], false);
  const std::string handle = p["tool_use_id"];
  EXPECT_NE(preview.find("\"handle\": \"" + handle + "\""), std::string::npos);
  EXPECT_EQ(read_file(outputs(tmp) / (handle + ".txt")), original);
  // Every byte one call away: the lines the preview left out, exactly.
  const size_t at = preview.find("[ctxkit: lines ");
  ASSERT_NE(at, std::string::npos);
  const std::string range = preview.substr(
      preview.find("--lines ", at) + 8, preview.find(']', at) - preview.find("--lines ", at) - 8);
  auto shown = run_tool("ctx-search", {"--show", handle, "--lines", range}, "", tmp.env());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const std::string head = preview.substr(0, at);
  const std::string tail = preview.substr(preview.find("]\n", at) + 2);
  EXPECT_EQ(head + shown.out + tail, original);
  // Visible: the event and the count ctx-status shows.
  const auto loc = core::Locations::resolve(tmp.env());
  const auto events = archive::capped_output_events(loc, p["session_id"].get<std::string>());
  ASSERT_EQ(events.size(), 1u);
  const json data = json::parse(events[0].data);
  EXPECT_EQ(data["handle"], handle);
  EXPECT_EQ(data["bytes"], original.size());
  EXPECT_GT(data["tokens_kept_out"].get<int64_t>(), 2000);
  EXPECT_EQ(archive::capped_tokens(loc, p["session_id"].get<std::string>()),
            data["tokens_kept_out"].get<uint64_t>());
  // The cap opens no database: none is made for it.
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/ctxkit/state.db"));
}

TEST_P(CapRecorded, McpOverTheThresholdGetsOneTextBlock) {
  TempDir tmp;
  const json p = recorded(GetParam(), "mcp_300");
  auto r = run_tool("ctx-cap", {}, p.dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = replacement(r);
  ASSERT_TRUE(out.is_array()) << r.out;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["type"], "text");
  EXPECT_TRUE(out[0]["text"].get<std::string>().ends_with(
      "MCPL line 300 of 300 lorem ipsum dolor sit amet\n"));
  EXPECT_EQ(read_file(outputs(tmp) / (p["tool_use_id"].get<std::string>() + ".txt")),
            p["tool_response"][0]["text"].get<std::string>());
}

TEST_P(CapRecorded, BashOverTheClientsLimitIsArchivedFromTheClientsFile) {
  TempDir tmp;
  json p = recorded(GetParam(), "bash_40k");
  const std::string whole = numbered(4000, "BASHBIG ");
  // The client's file, where the payload names it (in the session's folder of this HOME).
  std::string path = p["tool_response"]["persistedOutputPath"];
  path.replace(0, std::string("/home/user").size(), (tmp / "home").string());
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << whole;
  p["tool_response"]["persistedOutputPath"] = path;
  auto r = run_tool("ctx-cap", {}, p.dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = replacement(r);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_FALSE(out.contains("persistedOutputPath"));
  EXPECT_TRUE(out["stdout"].get<std::string>().ends_with("BASHBIG 3999\nBASHBIG 4000\n"));
  EXPECT_EQ(read_file(outputs(tmp) / (p["tool_use_id"].get<std::string>() + ".txt")), whole);
}

TEST_P(CapRecorded, SmallOutputsFailuresAndOtherToolsPassUnchanged) {
  TempDir tmp;
  for (const char* name : {"bash_stderr", "bash_exit3", "read_600"}) {
    auto r = run_tool("ctx-cap", {}, recorded(GetParam(), name).dump(), tmp.env());
    EXPECT_EQ(r.exit_code, 0) << name;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_EQ(r.err, "") << name;
  }
  EXPECT_FALSE(fs::exists(outputs(tmp)));
}

INSTANTIATE_TEST_SUITE_P(Versions, CapRecorded, ::testing::ValuesIn(client_fixture_dirs()),
                         version_name);

TEST(Cap, ThresholdsComeFromTheUsersConfig) {
  TempDir tmp;
  const std::string text = numbered(3000, "x");  // about 17,000 characters
  tmp.write("home/.config/ctxkit/config.toml", "[cap]\nbash_chars = 50000\n");
  auto r = run_tool("ctx-cap", {}, bash_payload(text).dump(), tmp.env());
  EXPECT_EQ(r.out, "");
  tmp.write("home/.config/ctxkit/config.toml", "[cap]\nenabled = false\n");
  EXPECT_EQ(run_tool("ctx-cap", {}, bash_payload(text).dump(), tmp.env()).out, "");
  tmp.write("home/.config/ctxkit/config.toml",
            "[cap]\nthreshold_chars = 20000\nbash_chars = 1000\n");
  EXPECT_NE(run_tool("ctx-cap", {}, bash_payload(text).dump(), tmp.env()).out, "");
}

TEST(Cap, ExcludedProjectPassesUnchangedWithOneLine) {
  TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[archive]\nexclude_projects = [\"app\"]\n");
  auto r = run_tool("ctx-cap", {}, bash_payload(numbered(3000, "x")).dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("excluded"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(outputs(tmp)));
}

TEST(CapHostile, ToolUseIdWithPathCharactersStaysInTheFolder) {
  TempDir tmp;
  auto r = run_tool("ctx-cap", {}, bash_payload(numbered(3000, "x"), "../../x").dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string preview = replacement(r)["stdout"];
  const size_t at = preview.find("\"handle\": \"h-");
  ASSERT_NE(at, std::string::npos) << preview;
  const std::string handle = preview.substr(at + 11, 18);
  EXPECT_TRUE(fs::exists(outputs(tmp) / (handle + ".txt")));
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/ctxkit/x.txt"));
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/x.txt"));
}

TEST(CapHostile, NulAndIllFormedUtf8AtTheCut) {
  TempDir tmp;
  std::string text = numbered(3000, "x");
  text[5] = '\0';
  // Ill-formed bytes (raw in the payload) right where the head's share ends and the tail's starts.
  std::string payload = bash_payload("HEADMARK" + text + "TAILMARK").dump();
  std::string bad(40, 'a');
  for (size_t i = 0; i < bad.size(); i += 4) bad[i] = '\xC3';
  payload.replace(payload.find("HEADMARK"), 8, std::string(990, 'a') + bad.substr(0, 20));
  payload.replace(payload.find("TAILMARK"), 8, bad + std::string(1990, 'b'));
  auto r = run_tool("ctx-cap", {}, payload, tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = replacement(r);  // valid JSON, ill-formed bytes replaced
  ASSERT_TRUE(out.is_object()) << r.out;
  const std::string archived = read_file(outputs(tmp) / "toolu_e2e.txt");
  EXPECT_EQ(archived.find('\0'), 990u + 20u + 5u);
  EXPECT_NE(archived.find(bad), std::string::npos);  // the archive keeps every byte
}

TEST(CapHostile, FiftyMegabytesAreCappedAndArchivedWhole) {
  TempDir tmp;
  std::string text;
  text.reserve(52u << 20);
  while (text.size() < (50u << 20))
    text += "a build log line with some words in it, number " + std::to_string(text.size()) + "\n";
  const std::string size = std::to_string(text.size());
  auto r = run_tool("ctx-cap", {}, bash_payload(text).dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = replacement(r);
  ASSERT_TRUE(out.is_object());
  EXPECT_LT(out["stdout"].get<std::string>().size(), 3500u);
  EXPECT_EQ(fs::file_size(outputs(tmp) / "toolu_e2e.txt"), text.size());
  EXPECT_TRUE(read_file(outputs(tmp) / "toolu_e2e.txt") == text);
}

TEST(CapHostile, OneGigabyteWhenAsked) {
  if (!std::getenv("CTXKIT_E2E_HUGE")) GTEST_SKIP() << "set CTXKIT_E2E_HUGE=1 (1 GB of output)";
  TempDir tmp;
  std::string line(99, 'z');
  line += '\n';
  std::string text;
  text.reserve(1u << 30);
  while (text.size() + line.size() <= (1u << 30)) text += line;
  auto r = run_tool("ctx-cap", {}, bash_payload(text).dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(replacement(r).is_object());
  EXPECT_EQ(fs::file_size(outputs(tmp) / "toolu_e2e.txt"), text.size());
}

TEST(CapHostile, FullDiskPassesUnchangedWithOneLine) {
  TempDir tmp;
  util::ProcessSpec spec;
  spec.argv = {"/usr/bin/prlimit", "--fsize=65536", bin_dir() + "/ctx-cap"};
  if (::access(spec.argv[0].c_str(), X_OK) != 0) GTEST_SKIP() << "no prlimit";
  const util::Env env = tmp.env();
  spec.env.emplace();
  for (const auto& [k, v] : env.vars()) (*spec.env)[k] = v;
  spec.stdin_data = bash_payload(numbered(30000, "x")).dump();  // 200 KB: past the 64 KB limit
  spec.timeout = std::chrono::seconds(60);
  auto r = util::run_process(spec);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(line_count(r->err), 1u) << r->err;
  EXPECT_NE(r->err.find("not capped"), std::string::npos) << r->err;
  EXPECT_FALSE(fs::exists(outputs(tmp) / "toolu_e2e.txt"));
}

TEST(CapHostile, ReadOnlyArchivePassesUnchangedWithOneLine) {
  // A folder of ours that is merely 0500 is made 0700 again (util::make_private_dirs); a read-only
  // file system is what cannot be written: the archive mounted read-only in a mount namespace.
  if (::geteuid() != 0 || ::access("/usr/bin/unshare", X_OK) != 0)
    GTEST_SKIP() << "mounting the archive read-only needs root and unshare";
  TempDir tmp;
  const fs::path archive = tmp / "home/.local/state/ctxkit/archive";
  fs::create_directories(archive);
  util::ProcessSpec spec;
  spec.argv = {"/usr/bin/unshare",
               "-m",
               "/bin/sh",
               "-c",
               "mount --bind \"$1\" \"$1\" && mount -o remount,ro,bind \"$1\" \"$1\" || exit 99; "
               "exec \"$2\"",
               "sh",
               archive.string(),
               bin_dir() + "/ctx-cap"};
  const util::Env env = tmp.env();
  spec.env.emplace();
  for (const auto& [k, v] : env.vars()) (*spec.env)[k] = v;
  spec.stdin_data = bash_payload(numbered(3000, "x")).dump();
  spec.timeout = std::chrono::seconds(60);
  auto r = util::run_process(spec);
  ASSERT_TRUE(r);
  if (r->exit_code == 99) GTEST_SKIP() << "cannot mount here: " << r->err;
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(line_count(r->err), 1u) << r->err;
  EXPECT_NE(r->err.find("not capped"), std::string::npos) << r->err;
  EXPECT_FALSE(fs::exists(outputs(tmp)));
}

TEST(CapHostile, BrokenPayloadPassesWithOneLine) {
  TempDir tmp;
  for (const std::string& bad :
       {std::string("{"), std::string("not json"), std::string(1000, '[')}) {
    auto r = run_tool("ctx-cap", {}, bad, tmp.env());
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
  }
}

}  // namespace
}  // namespace ctxkit::test
