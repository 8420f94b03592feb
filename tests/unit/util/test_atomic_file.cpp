#include <gtest/gtest.h>
#include <sys/stat.h>

#include "unit/temp_dir.hpp"
#include "util/atomic_file.hpp"

namespace ctxkit {
namespace {
namespace fs = std::filesystem;

TEST(AtomicFile, ReplacesContentAndAppliesMode) {
  test::TempDir tmp;
  auto p = tmp.write("f.json", "old");
  ASSERT_TRUE(util::write_file_atomic(p, "new", 0600));
  EXPECT_EQ(test::read_file(p), "new");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const auto& e : fs::directory_iterator(tmp.path())) EXPECT_EQ(e.path().filename(), "f.json");
}

TEST(AtomicFile, UncommittedFileLeavesNothingBehind) {
  test::TempDir tmp;
  auto p = tmp.write("f.jsonl", "original");
  {
    auto f = util::AtomicFile::create(p, 0600);
    ASSERT_TRUE(f);
    f->write("partial");
    EXPECT_FALSE(f->temp_path().filename().string().ends_with(".jsonl"));
  }
  EXPECT_EQ(test::read_file(p), "original");
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++n;
  EXPECT_EQ(n, 1u);
}

TEST(AtomicFile, MissingDirectoryIsAnError) {
  test::TempDir tmp;
  auto r = util::write_file_atomic(tmp / "no/such/dir/f", "x", 0600);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("creating a temporary file in"), std::string::npos);
}

}  // namespace
}  // namespace ctxkit
