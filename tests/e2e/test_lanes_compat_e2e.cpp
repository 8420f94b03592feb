// The reference server's recorded answers (tests/fixtures/lanes/<scenario>.json: its tool calls
// in order, each with the answer's text and is_error, and the template it ran) replayed against
// ctx-workflow-mcp over stdio: the same sequence of tool calls gives the same steps and context
// actions. Where ctxkit deliberately differs, the recorded step says so ("adapted": a `clear`
// handed out is {"contextAction":"/clear",…} where the reference answers `sessionCleared`).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "e2e/e2e_support.hpp"
#include "e2e/mcp_client.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kLanes = fs::path(CTXKIT_SOURCE_DIR) / "tests/fixtures/lanes";

class LanesCompat : public ::testing::TestWithParam<std::string> {};

TEST_P(LanesCompat, SameAnswersAsTheReferenceServer) {
  json scenario = json::parse(read_file(kLanes / (GetParam() + ".json")));
  TempDir tmp;
  fs::path worktree = tmp / "repo/.worktrees/wt";
  fs::create_directories(worktree);
  fs::path workflow = tmp / "wf.yaml";
  fs::copy_file(kLanes / scenario["template"].get<std::string>(), workflow);
  McpClient c({std::string(CTXKIT_BIN_DIR) + "/ctx-workflow-mcp", "--worktree", worktree.string(),
               "--workflow-path", workflow.string(), "--repo-root", (tmp / "repo").string()},
              tmp.env(), tmp / "stderr.txt");
  c.initialize("2025-06-18");
  int index = 0;
  for (const auto& call : scenario["steps"]) {
    if (!call.contains("tool")) continue;  // state snapshots: checked by the workflow unit tests
    SCOPED_TRACE(GetParam() + " call " + std::to_string(index++) + " " +
                 call["tool"].get<std::string>());
    json result = call.contains("arguments")
                      ? c.call(call["tool"], call["arguments"])
                      : c.request("tools/call", {{"name", call["tool"]}})["result"];
    ASSERT_FALSE(result.is_null());
    EXPECT_EQ(result["isError"], call["is_error"]);
    // Byte for byte: the same JSON text, pretty-printed as the reference prints it.
    EXPECT_EQ(result["content"][0]["text"], call["text"]);
  }
  c.close_input();
  EXPECT_EQ(c.wait(), 0);
}

// Not replayed here: a2_context_full (its template's compact_focus adds ctxkit's "focus" to the
// compact answers) and c_bad_calls (it calls Lanes's IDE-only session_clear tool).
INSTANTIATE_TEST_SUITE_P(
    Recorded, LanesCompat,
    ::testing::Values("a_context_example", "b1_loop_no_tasks", "b2_loop_empty_list_at_loop",
                      "b3_loop_empty_list_before", "b4_empty_list_at_loop_next_context",
                      "e1_start_compact", "e2_start_clear", "e4_ralph_first",
                      "g_loop_context_pending", "k_set_tasks_midloop", "m_loop_agent"),
    [](const auto& p) { return p.param; });

}  // namespace
}  // namespace ctxkit::test
