#include <gtest/gtest.h>

#include "util/shell.hpp"

namespace ctxkit {
namespace {
using Words = std::vector<std::string>;

TEST(ShellWords, SplitsOnBlanksAndKeepsQuotedText) {
  EXPECT_EQ(util::split_shell_words("ccstatusline"), (Words{"ccstatusline"}));
  EXPECT_EQ(util::split_shell_words("  npx  -y ccusage\tstatusline "),
            (Words{"npx", "-y", "ccusage", "statusline"}));
  EXPECT_EQ(util::split_shell_words("'/opt/my tools/line.sh' --x \"a b\""),
            (Words{"/opt/my tools/line.sh", "--x", "a b"}));
  EXPECT_EQ(util::split_shell_words("a\\ b 'it'\\''s' \"q\\\"t\\\\\""),
            (Words{"a b", "it's", "q\"t\\"}));
  EXPECT_EQ(util::split_shell_words("x '' y"), (Words{"x", "", "y"}));
  EXPECT_EQ(util::split_shell_words("\"a\\nb\""),
            (Words{"a\\nb"}));  // \n is not an escape inside "…"
  EXPECT_EQ(util::split_shell_words("run --opt=1 a#b a~b"),
            (Words{"run", "--opt=1", "a#b", "a~b"}));
  EXPECT_EQ(util::split_shell_words("'$HOME/x' '*'"), (Words{"$HOME/x", "*"}));
}

TEST(ShellWords, AnythingTheShellWouldInterpretNeedsTheShell) {
  for (const char* cmd : {"$HOME/bin/line",
                          "echo \"$USER\"",
                          "a | b",
                          "a && b",
                          "a; b",
                          "a > f",
                          "a < f",
                          "echo `date`",
                          "echo $(date)",
                          "ls *.txt",
                          "ls x?",
                          "ls [ab]",
                          "~/bin/line",
                          "a # comment",
                          "FOO=1 line",
                          "'unterminated",
                          "\"unterminated",
                          "x\\",
                          "",
                          "   ",
                          "a\nb",
                          "(a)",
                          "a &",
                          "{ a; }",
                          "! a"}) {
    EXPECT_FALSE(util::split_shell_words(cmd)) << cmd;
  }
}

TEST(ShellWords, CommandArgvFallsBackToTheShell) {
  EXPECT_EQ(util::command_argv("line.sh --x"), (Words{"line.sh", "--x"}));
  EXPECT_EQ(util::command_argv("line.sh | head -1"), (Words{"/bin/sh", "-c", "line.sh | head -1"}));
}

TEST(ShellWords, QuotedTextSplitsBackToItself) {
  for (const std::string s : {"plain", "with space", "it's", "$HOME", "a\"b", "*", "~x", "#"})
    EXPECT_EQ(util::split_shell_words(util::shell_quote(s)), (Words{s})) << s;
}

}  // namespace
}  // namespace ctxkit
