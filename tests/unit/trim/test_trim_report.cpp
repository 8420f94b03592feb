#include <gtest/gtest.h>

#include "trim/trim_report.hpp"

namespace ctxkit::trim {
namespace {

// A trim of 3 Bash results (one of them only its image replaced) and a Read result, 1,234,568
// characters saved, with Grep seen but not a target.
SessionTrim a_trim(bool dry_run, bool written) {
  SessionTrim t;
  t.transcript = "/h/.claude/projects/-p/s-1.jsonl";
  t.parent_id = "s-1";
  t.new_session_id = "s-2";
  t.archive.transcript = "/h/state/archive/-p/s-1.jsonl";
  t.dry_run = dry_run;
  t.threshold = 500;
  t.tools = {"Bash", "Read"};
  t.min_tokens_saved = 2000;
  t.outcome.cwd = "/p q";
  t.outcome.written = written;
  if (written) t.outcome.output = "/h/.claude/projects/-p/s-2.jsonl";
  auto& s = t.outcome.stats;
  s.per_tool["Bash"] = {3, 4'000'000, 3, 1'200'000, 1};
  s.per_tool["Read"] = {1, 40'000, 1, 34'568, 0};
  s.per_tool["Grep"] = {2, 8'000'000, 0, 0, 0};
  s.results_trimmed = 4;
  s.results_images_only = 1;
  s.images_replaced = 1;
  s.inputs_trimmed = 1;
  s.chars_saved = 1'234'568;
  return t;
}

TEST(TrimReport, ADryRunPrintsEachToolLargestFirstAndWhatWouldBeCut) {
  const std::string out = trim_report_text(a_trim(true, false));
  EXPECT_EQ(out,
            "/h/.claude/projects/-p/s-1.jsonl (dry run: nothing written)\n"
            "tool                  results       tokens  trimmed   tokens saved\n"
            "Grep                        2    2,000,000        0              0  (not a target "
            "tool)\n"
            "Bash                        3    1,000,000        3        300,000\n"
            "Read                        1       10,000        1          8,642\n"
            "would trim 3 tool results, 1 image and 1 tool input: about 308,642 tokens saved "
            "(threshold 500 characters)\n");
}

TEST(TrimReport, AWrittenTrimNamesTheNewSessionTheArchiveAndTheResumeCommand) {
  auto t = a_trim(false, true);
  t.outcome.late_lines = 2;
  const std::string out = trim_report_text(t);
  EXPECT_EQ(out,
            "Trimmed 3 tool results, 1 image and 1 tool input (Bash 4, Read 1): about 308,642 "
            "tokens saved (1,234,568 characters).\n"
            "New session s-2 (trimmed from s-1).\n"
            "The original is untouched and archived at /h/state/archive/-p/s-1.jsonl.\n"
            "Note: 2 lines were added to the session after the snapshot; they are not in the "
            "trimmed copy.\n"
            "Continue in the trimmed session with:\n  cd '/p q' && claude --resume s-2\n");
}

TEST(TrimReport, TooLittleToSaveSaysNothingWasWritten) {
  auto t = a_trim(false, false);
  t.outcome.stats.chars_saved = 4000;
  EXPECT_EQ(trim_report_text(t),
            "Nothing worth trimming: about 1,000 tokens would be saved (less than 2000). No new "
            "session was written.\n");
}

TEST(TrimReport, TheJsonNamesTheNewSessionOnlyWhenOneWasWritten) {
  auto written = trim_report_json(a_trim(false, true));
  EXPECT_EQ(written["session_id"], "s-2");
  EXPECT_EQ(written["resume_command"], "cd '/p q' && claude --resume s-2");
  EXPECT_EQ(written["archive"], "/h/state/archive/-p/s-1.jsonl");
  EXPECT_EQ(written["results_cut"], 3);
  EXPECT_EQ(written["tokens_saved"], 308642);
  EXPECT_EQ(written["per_tool"]["Grep"]["target"], false);
  EXPECT_EQ(written["per_tool"]["Bash"]["result_tokens"], 1000000);
  EXPECT_TRUE(written["context_percent"].is_null());
  EXPECT_FALSE(written.contains("warning"));
  auto dry = a_trim(true, false);
  dry.warning = "lineage not recorded";
  dry.context_percent = 71;
  const auto j = trim_report_json(dry);
  EXPECT_FALSE(j.contains("session_id"));
  EXPECT_FALSE(j.contains("archive"));
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["context_percent"], 71);
  EXPECT_EQ(j["warning"], "lineage not recorded");
}

}  // namespace
}  // namespace ctxkit::trim
