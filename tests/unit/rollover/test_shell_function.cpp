// The `claude` shell function of `ctx-settings install --supervise`: put in and taken out of the
// user's shell start-up files without touching the rest of them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "rollover/shell_function.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::rollover {
namespace {
namespace fs = std::filesystem;

TEST(ShellFunction, TheBlockNamesItsProgramQuotedAndIsFoundAgain) {
  const std::string block = shell_function_block("/opt/it's here/bin/ctx-rollover");
  EXPECT_TRUE(block.starts_with(std::string(kShellBlockBegin) +
                                "\nunalias claude 2>/dev/null\nclaude() {\n"))
      << block;
  EXPECT_TRUE(block.ends_with(std::string(kShellBlockEnd) + "\n"));
  EXPECT_NE(block.find("'/opt/it'\\''s here/bin/ctx-rollover' --supervise -- \"$@\""),
            std::string::npos)
      << block;
  EXPECT_NE(block.find("command \"$@\""), std::string::npos);
  EXPECT_EQ(shell_block_program("x=1\n" + block), "/opt/it's here/bin/ctx-rollover");
  EXPECT_EQ(shell_block_program("x=1\n"), std::nullopt);
  // The marker quoted inside a line is not a block.
  EXPECT_EQ(shell_block_program("echo '" + block), std::nullopt);
}

TEST(ShellFunction, PutReplacesAndRemoveRestoresTheRestByteForByte) {
  const std::string mine = "export EDITOR=vi\nalias ll='ls -l'";  // no final newline
  const std::string a = shell_function_block("/a/bin/ctx-rollover");
  const std::string b = shell_function_block("/b/bin/ctx-rollover");
  const std::string once = with_shell_block(mine, a);
  EXPECT_EQ(once, mine + "\n\n" + a);
  const std::string twice = with_shell_block(once, b);  // replaced, not added
  EXPECT_EQ(twice, mine + "\n\n" + b);
  EXPECT_EQ(without_shell_block(twice), mine + "\n");
  EXPECT_EQ(with_shell_block("", a), a);
  EXPECT_EQ(without_shell_block(a), "");
  // The user's lines after the block stay where they are.
  EXPECT_EQ(without_shell_block(mine + "\n\n" + a + "PS1='$ '\n"), mine + "\nPS1='$ '\n");
  EXPECT_EQ(without_shell_block(mine), mine);
}

TEST(ShellFunction, FilesAreWrittenThroughALinkKeepingTheirModeAndOnlyThisInstallsGoes) {
  test::TempDir tmp;
  const fs::path real = tmp.write("dotfiles/bashrc", "alias ll='ls -l'\n");
  ::chmod(real.c_str(), 0640);
  const fs::path rc = tmp / "home/.bashrc";
  fs::create_directories(rc.parent_path());
  fs::create_symlink("../dotfiles/bashrc", rc);
  auto put = put_shell_block(rc, shell_function_block("/a/bin/ctx-rollover"));
  ASSERT_TRUE(put) << put.error().message;
  EXPECT_TRUE(*put);
  EXPECT_TRUE(fs::is_symlink(rc));
  struct stat st {};
  ASSERT_EQ(::stat(real.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_NE(test::read_file(real).find("/a/bin/ctx-rollover --supervise"), std::string::npos);
  auto again = put_shell_block(rc, shell_function_block("/a/bin/ctx-rollover"));
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);  // unchanged

  bool removed = true;
  auto kept = remove_shell_block(rc, "/b/bin", &removed);  // another install's: kept
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, "/a/bin/ctx-rollover");
  EXPECT_FALSE(removed);
  kept = remove_shell_block(rc, "/a/bin", &removed);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, "");
  EXPECT_TRUE(removed);
  EXPECT_EQ(test::read_file(real), "alias ll='ls -l'\n");
  EXPECT_TRUE(fs::is_symlink(rc));
  // A missing file holds none; --all takes any install's.
  EXPECT_EQ(*remove_shell_block(tmp / "home/.zshrc", "", &removed), "");
  EXPECT_FALSE(removed);
}

// A start-up file the install made goes with its block when nothing else was put in it (also
// after an install from another folder replaced the block); one the user wrote in stays.
TEST(ShellFunction, AFileMadeForTheBlockGoesWithItUnlessTheUserWroteInIt) {
  test::TempDir tmp;
  const fs::path rc = tmp / "home/.bashrc";
  fs::create_directories(rc.parent_path());
  ASSERT_TRUE(put_shell_block(rc, shell_function_block("/a/bin/ctx-rollover")));
  ASSERT_TRUE(put_shell_block(rc, shell_function_block("/b/bin/ctx-rollover")));
  EXPECT_EQ(shell_block_program(test::read_file(rc)), "/b/bin/ctx-rollover");
  bool removed = false;
  auto kept = remove_shell_block(rc, "/b/bin", &removed);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_TRUE(removed);
  EXPECT_FALSE(fs::exists(rc));

  ASSERT_TRUE(put_shell_block(rc, shell_function_block("/a/bin/ctx-rollover")));
  { std::ofstream(rc, std::ios::app) << "export EDITOR=vi\n"; }
  ASSERT_TRUE(remove_shell_block(rc, "", &removed));
  EXPECT_TRUE(removed);
  EXPECT_EQ(test::read_file(rc), "export EDITOR=vi\n");

  // A file that was there before, even empty, stays.
  const fs::path zshrc = tmp.write("home/.zshrc", "");
  ASSERT_TRUE(put_shell_block(zshrc, shell_function_block("/a/bin/ctx-rollover")));
  ASSERT_TRUE(remove_shell_block(zshrc, "", &removed));
  EXPECT_TRUE(removed);
  EXPECT_TRUE(fs::exists(zshrc));
  EXPECT_EQ(test::read_file(zshrc), "");
}

TEST(ShellFunction, ZshrcOnlyWhereZshIsUsed) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  env.set("SHELL", "/bin/bash");
  const fs::path home = tmp / "home";
  EXPECT_EQ(shell_startup_files(env), std::vector<fs::path>{home / ".bashrc"});
  env.set("SHELL", "/usr/bin/zsh");
  EXPECT_EQ(shell_startup_files(env), (std::vector<fs::path>{home / ".bashrc", home / ".zshrc"}));
  env.set("SHELL", "/bin/bash");
  env.set("ZDOTDIR", (tmp / "z").string());
  tmp.write("z/.zshrc", "");
  EXPECT_EQ(shell_startup_files(env), (std::vector<fs::path>{home / ".bashrc", tmp / "z/.zshrc"}));
}

}  // namespace
}  // namespace ctxkit::rollover
