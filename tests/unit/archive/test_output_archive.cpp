// Capped outputs in the archive: handles that never name a path outside their folder, private
// atomic writes, ranges of lines and bytes, a search inside one output.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "archive/output_archive.hpp"
#include "archive/output_preview.hpp"
#include "unit/temp_dir.hpp"
#include "util/utf8.hpp"

namespace ctxkit::archive {
namespace {
namespace fs = std::filesystem;

std::string numbered(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

Result<void> archive_text(const core::Locations& loc, const std::string& handle,
                          const std::string& text) {
  auto w = OutputWriter::create(loc, handle);
  if (!w) return std::unexpected(w.error());
  w->write(text);
  PreviewBuilder b({100, 100});
  b.add(text);
  b.preview(handle);
  OutputMeta m;
  m.handle = handle;
  m.tool_use_id = handle;
  m.session_id = "s1";
  m.tool_name = "Bash";
  m.project = "-home-me-app";
  m.bytes = b.figures().bytes;
  m.lines = b.figures().lines;
  m.chars = b.figures().chars;
  return w->commit(m);
}

TEST(OutputArchive, HandlesNeverNameAPathOutsideTheFolder) {
  EXPECT_EQ(output_handle("toolu_01ABCdef-9"), "toolu_01ABCdef-9");
  for (const char* id : {"../../x", "a/b", "..", "", "x y", "toolu\n", "\xC3\xA9"}) {
    const std::string h = output_handle(id);
    EXPECT_TRUE(h.starts_with("h-")) << id;
    EXPECT_TRUE(valid_output_handle(h)) << id;
  }
  EXPECT_NE(output_handle("../../x"), output_handle("../../y"));
  EXPECT_EQ(output_handle(std::string(101, 'a')).size(), 18u);
  EXPECT_FALSE(valid_output_handle("../x"));
  EXPECT_FALSE(valid_output_handle(""));
}

TEST(OutputArchive, WritesPrivatelyAndReadsRanges) {
  test::TempDir tmp;
  const auto loc = core::Locations::resolve(tmp.env());
  const std::string text = numbered(500);
  ASSERT_TRUE(archive_text(loc, "toolu_a", text));
  struct stat st {};
  ASSERT_EQ(::stat(outputs_dir(loc).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((outputs_dir(loc) / "toolu_a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(test::read_file(outputs_dir(loc) / "toolu_a.txt"), text);

  auto r = read_output(loc, "toolu_a", *parse_output_range("10:12", false));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, "line 10\nline 11\nline 12\n");
  EXPECT_EQ(r->first_line, 10u);
  EXPECT_EQ(r->last_line, 12u);
  EXPECT_EQ(r->meta.lines, 500u);
  EXPECT_FALSE(r->cut);

  auto tail = read_output(loc, "toolu_a", *parse_output_range("499:", false));
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->text, "line 499\nline 500\n");

  auto bytes = read_output(loc, "toolu_a", *parse_output_range("0:7", true));
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->text, "line 1\n");

  auto cut = read_output(loc, "toolu_a", *parse_output_range("1:", false), "", 20);
  ASSERT_TRUE(cut);
  EXPECT_TRUE(cut->cut);
  EXPECT_EQ(cut->text, "line 1\nline 2\n");

  auto found = read_output(loc, "toolu_a", *parse_output_range("1:", false), "LINE 49");
  ASSERT_TRUE(found);
  ASSERT_EQ(found->matches.size(), 11u);  // 49, 490..499
  EXPECT_EQ(found->matches[0].line, 49u);
  EXPECT_EQ(found->matches[0].text, "line 49");

  auto past = read_output(loc, "toolu_a", *parse_output_range("600:", false));
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().message, "lines 600: the output has 500 lines");
  auto missing = read_output(loc, "toolu_b", {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);
  auto bad = read_output(loc, "../toolu_a", {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, Error::Kind::Invalid);
}

TEST(OutputArchive, ByteRangesNeverCutACharacter) {
  test::TempDir tmp;
  const auto loc = core::Locations::resolve(tmp.env());
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xE2\x82\xAC";
  ASSERT_TRUE(archive_text(loc, "toolu_u", text));
  auto r = read_output(loc, "toolu_u", *parse_output_range("1:8", true));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "\xE2\x82\xAC");
  EXPECT_EQ(r->from_byte, 3u);
  EXPECT_EQ(r->to_byte, 6u);
}

TEST(OutputArchive, ARangeIsCheckedWhenParsed) {
  EXPECT_FALSE(parse_output_range("5", false));
  EXPECT_FALSE(parse_output_range("0:3", false));
  EXPECT_FALSE(parse_output_range("9:3", false));
  EXPECT_FALSE(parse_output_range("a:b", false));
  EXPECT_EQ(parse_output_range("9:3", false).error().message,
            "lines '9:3': the end comes before the start");
  auto open = parse_output_range(":30", false);
  ASSERT_TRUE(open);
  EXPECT_EQ(open->from, 1u);
  EXPECT_EQ(open->to, 30u);
}

TEST(OutputArchive, AReadOnlyFolderIsAnErrorAndLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only folder";
  test::TempDir tmp;
  const auto loc = core::Locations::resolve(tmp.env());
  fs::create_directories(outputs_dir(loc));
  fs::permissions(outputs_dir(loc), fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_FALSE(archive_text(loc, "toolu_a", numbered(100)));
  fs::permissions(outputs_dir(loc), fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(outputs_dir(loc) / "toolu_a.txt"));
}

TEST(OutputArchive, CountsTokensKeptOutPerSession) {
  test::TempDir tmp;
  const auto loc = core::Locations::resolve(tmp.env());
  EXPECT_EQ(capped_tokens(loc, "s1"), 0u);
  ASSERT_TRUE(record_capped_output(loc, "s1", 1000, R"({"at_ms":5,"handle":"a"})"));
  ASSERT_TRUE(record_capped_output(loc, "s1", 234, R"({"at_ms":6,"handle":"b"})"));
  ASSERT_TRUE(record_capped_output(loc, "../s2", 5, ""));
  EXPECT_EQ(capped_tokens(loc, "s1"), 1234u);
  EXPECT_EQ(capped_tokens(loc, "../s2"), 5u);
  EXPECT_EQ(capped_tokens(loc, "s3"), 0u);
  const auto events = capped_output_events(loc, "s1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at_ms, 5);
  EXPECT_EQ(events[1].data, R"({"at_ms":6,"handle":"b"})");
  EXPECT_TRUE(capped_output_events(loc, "../s2").empty());
  // An event on two lines would break the record: refused, nothing written.
  EXPECT_FALSE(record_capped_output(loc, "s1", 1, "{\n}"));
  EXPECT_EQ(capped_tokens(loc, "s1"), 1234u);
}

TEST(OutputArchive, ABrokenRecordLineCountsNothingAndHidesNoOtherLine) {
  test::TempDir tmp;
  const auto loc = core::Locations::resolve(tmp.env());
  ASSERT_TRUE(record_capped_output(loc, "s1", 10, R"({"at_ms":1})"));
  // As an earlier version wrote them (a bare number), and lines damaged by hand.
  const auto file = outputs_dir(loc) / "sessions" / (output_handle("s1") + ".tokens");
  {
    std::ofstream f(file, std::ios::app);
    f << "7\nnot a number\n3\t{broken\n4\t[1]\n5\t{\"at_ms\":\"x\"}\n";
  }
  EXPECT_EQ(capped_tokens(loc, "s1"), 10u + 7 + 3 + 4 + 5);
  const auto events = capped_output_events(loc, "s1");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at_ms, 1);
}

}  // namespace
}  // namespace ctxkit::archive
