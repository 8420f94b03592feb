// The reference server's recorded answers (tests/fixtures/lanes/) replayed against
// ctx-workflow-mcp: the same sequence of tool calls gives the same steps and context actions.
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

// What ctxkit answers where the reference answers `sessionCleared` (its IDE extension's path).
json expected_answer(const json& lanes_text) {
  if (lanes_text.is_object() && lanes_text.contains("sessionCleared"))
    return json{{"contextAction", "/clear"}, {"message", "Please run `/clear` first, then call workflow_status again."}};
  return lanes_text;
}

class LanesCompat : public ::testing::TestWithParam<std::string> {};

TEST_P(LanesCompat, SameAnswersAsTheReferenceServer) {
  json scenario = json::parse(read_file(kLanes / (GetParam() + ".json")));
  TempDir tmp;
  fs::path worktree = tmp / "repo/.worktrees/wt";
  fs::create_directories(worktree);
  fs::path workflow = tmp / "wf.yaml";
  fs::copy_file(kLanes / "templates" / scenario["template"].get<std::string>(), workflow);
  McpClient c({std::string(CTXKIT_BIN_DIR) + "/ctx-workflow-mcp", "--worktree", worktree.string(), "--workflow-path",
               workflow.string(), "--repo-root", (tmp / "repo").string()},
              tmp.env(), tmp / "stderr.txt");
  c.initialize("2025-06-18");
  int index = 0;
  for (const auto& call : scenario["calls"]) {
    SCOPED_TRACE(GetParam() + " call " + std::to_string(index++) + " " + call["tool"].get<std::string>());
    json result = c.call(call["tool"], call.value("arguments", json::object()));
    ASSERT_FALSE(result.is_null());
    EXPECT_EQ(result["isError"], call["isError"]);
    EXPECT_EQ(McpClient::text_json(result), expected_answer(call["text"]));
  }
  c.close_input();
  EXPECT_EQ(c.wait(), 0);
}

INSTANTIATE_TEST_SUITE_P(Recorded, LanesCompat,
                         ::testing::Values("a_context_example", "b1_loop_no_tasks", "e4_ralph_first",
                                           "g_loop_context_pending"));

}  // namespace
}  // namespace ctxkit::test
