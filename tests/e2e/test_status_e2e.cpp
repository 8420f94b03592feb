#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
using json = nlohmann::json;

TEST(Status, RecordsTheClientsExactFigureForTheSession) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json all = json::parse(read_file(fixtures() / "claude-sonnet-4-5/hooks/StatusLine.json"));
  json p = all["payloads"][1];
  p["transcript_path"] = (tmp / "t.jsonl").string();
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = StateStore::open(tmp / "home/.local/state/ctxkit/state.db", 1000);
  ASSERT_TRUE(store);
  auto fig = store->status(p["session_id"]);
  ASSERT_TRUE(fig && *fig);
  auto cu = p["context_window"]["current_usage"];
  EXPECT_EQ((*fig)->tokens, cu["input_tokens"].get<int64_t>() + cu["cache_creation_input_tokens"].get<int64_t>() +
                                cu["cache_read_input_tokens"].get<int64_t>());
  EXPECT_EQ((*fig)->window, 200000);
}

TEST(Status, OneMillionWindowReportedByTheClient) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json p = {{"session_id", "S"}, {"transcript_path", (tmp / "t.jsonl").string()},
            {"context_window", {{"context_window_size", 1000000},
                                {"current_usage", {{"input_tokens", 1}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 483499}}}}}};
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  EXPECT_EQ(r.out, "Context 50% · 484k of 967k usable · 1M window\n");
}

TEST(Status, ShowConfigAndVersion) {
  TempDir tmp;
  auto r = run_tool("ctx-status", {"--version"}, "", tmp.env());
  EXPECT_EQ(r.out, "ctx-status 0.1.0\n");
  r = run_tool("ctx-status", {"--show-config"}, "", tmp.env());
  EXPECT_NE(r.out.find("context.basis = \"usable\"  "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ctxkit::test
