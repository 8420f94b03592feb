#include <gtest/gtest.h>

#include <string>

#include "core/toml_edit.hpp"

namespace ctxkit::core {
namespace {

std::string set_ok(const std::string& text, const std::string& value,
                   const std::string& table = "runner", const std::string& key = "mode") {
  auto r = set_toml_string(text, table, key, value);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : std::string();
}

std::string set_error(const std::string& text, const std::string& table = "runner",
                      const std::string& key = "mode",
                      const std::string& value = "fresh-per-task") {
  auto r = set_toml_string(text, table, key, value);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? std::string() : r.error().message;
}

TEST(TomlEdit, ReplacesAnExistingValueKeepingEverythingElse) {
  const std::string before =
      "# project settings\n"
      "[context]\n"
      "warn_threshold = 60  # percent\n"
      "\n"
      "[runner]\n"
      "  mode   =  \"continuous\"   # the default\n"
      "max_iterations = 50\n"
      "\n"
      "[other]\n"
      "mode = \"keep me\"\n";
  EXPECT_EQ(set_ok(before, "hybrid"),
            "# project settings\n"
            "[context]\n"
            "warn_threshold = 60  # percent\n"
            "\n"
            "[runner]\n"
            "  mode   =  \"hybrid\"   # the default\n"
            "max_iterations = 50\n"
            "\n"
            "[other]\n"
            "mode = \"keep me\"\n");
}

TEST(TomlEdit, ReplacesValuesOfAnyTypeAndQuoting) {
  EXPECT_EQ(set_ok("[runner]\nmode = 'literal'\n", "x"), "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = 3\n", "x"), "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = 1979-05-27 07:32:00 # when\n", "x"),
            "[runner]\nmode = \"x\" # when\n");
  EXPECT_EQ(set_ok("[runner]\nmode = [\n  \"a\", # first\n  \"]\",\n] # list\nnext = 1\n", "x"),
            "[runner]\nmode = \"x\" # list\nnext = 1\n");
  EXPECT_EQ(set_ok("[runner]\nmode = \"a \\\" # not a comment\"\n", "x"),
            "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = \"a\"\n", "x"), "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = {a = 1}\n", "x"), "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = \"\"\n", "x"), "[runner]\nmode = \"x\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode = \"a\"", "x"), "[runner]\nmode = \"x\"");
}

TEST(TomlEdit, QuotedKeysAndTableNamesMatch) {
  EXPECT_EQ(set_ok("[\"runner\"]\n\"mode\" = \"a\"\n", "b"), "[\"runner\"]\n\"mode\" = \"b\"\n");
  EXPECT_EQ(set_ok("[ 'runner' ] # header\n'mode'='a'\n", "b"),
            "[ 'runner' ] # header\n'mode'=\"b\"\n");
  EXPECT_EQ(set_ok("[runner]\n\"mo\\u0064e\" = \"a\"\n", "b"),
            "[runner]\n\"mo\\u0064e\" = \"b\"\n");
}

TEST(TomlEdit, AKeyThatIsAPrefixOfAnotherIsNotConfused) {
  EXPECT_EQ(set_ok("[runner]\nmode_x = \"a\"\nmodex = 1\n", "b"),
            "[runner]\nmode_x = \"a\"\nmodex = 1\nmode = \"b\"\n");
  EXPECT_EQ(set_ok("[runner]\nmode_x = \"a\"\nmode = \"a\"\n", "b"),
            "[runner]\nmode_x = \"a\"\nmode = \"b\"\n");
  EXPECT_EQ(set_ok("[runner_x]\nmode = \"a\"\n", "b"),
            "[runner_x]\nmode = \"a\"\n\n[runner]\nmode = \"b\"\n");
}

TEST(TomlEdit, AMissingKeyIsTheTablesLastKeyLine) {
  EXPECT_EQ(set_ok("[runner]\nmax_iterations = 5\n\n[other]\nx = 1\n", "hybrid"),
            "[runner]\nmax_iterations = 5\nmode = \"hybrid\"\n\n[other]\nx = 1\n");
  // The header alone, then other tables.
  EXPECT_EQ(set_ok("[runner]\n[other]\nx = 1\n", "hybrid"),
            "[runner]\nmode = \"hybrid\"\n[other]\nx = 1\n");
  // A comment right below the keys belongs to the table; one after a blank line to what follows.
  EXPECT_EQ(set_ok("[runner]\n  a = 1\n  # b = 2\n\n# about [other]\n[other]\n", "x"),
            "[runner]\n  a = 1\n  # b = 2\n  mode = \"x\"\n\n# about [other]\n[other]\n");
  // At the end of a file without a final newline.
  EXPECT_EQ(set_ok("[runner]\na = 1", "x"), "[runner]\na = 1\nmode = \"x\"\n");
  // After a multi-line value.
  EXPECT_EQ(set_ok("[runner]\nargs = [\n  \"--x\",\n]\n\n[b]\n", "x"),
            "[runner]\nargs = [\n  \"--x\",\n]\nmode = \"x\"\n\n[b]\n");
  // A sub-table does not count as the table's own keys.
  EXPECT_EQ(set_ok("[runner]\na = 1\n[runner.sub]\nmode = \"y\"\n", "x"),
            "[runner]\na = 1\nmode = \"x\"\n[runner.sub]\nmode = \"y\"\n");
}

TEST(TomlEdit, AMissingTableIsAppended) {
  EXPECT_EQ(set_ok("[context]\nwarn_threshold = 60\n", "hybrid"),
            "[context]\nwarn_threshold = 60\n\n[runner]\nmode = \"hybrid\"\n");
  EXPECT_EQ(set_ok("[context]\nwarn_threshold = 60", "hybrid"),
            "[context]\nwarn_threshold = 60\n\n[runner]\nmode = \"hybrid\"\n");
  EXPECT_EQ(set_ok("", "hybrid"), "[runner]\nmode = \"hybrid\"\n");
  EXPECT_EQ(set_ok("# only a comment\n", "hybrid"),
            "# only a comment\n\n[runner]\nmode = \"hybrid\"\n");
  // A table defined only through its sub-tables is still missing its own header.
  EXPECT_EQ(set_ok("[runner.sub]\nx = 1\n", "hybrid"),
            "[runner.sub]\nx = 1\n\n[runner]\nmode = \"hybrid\"\n");
  // Same key name in another table, and inside another table's dotted key.
  EXPECT_EQ(set_ok("[other]\nmode = \"a\"\nrunner.mode = \"b\"\n", "c"),
            "[other]\nmode = \"a\"\nrunner.mode = \"b\"\n\n[runner]\nmode = \"c\"\n");
}

TEST(TomlEdit, CrlfLineEndingsAreKept) {
  EXPECT_EQ(set_ok("[runner]\r\nmode = \"a\" # c\r\nx = 1\r\n", "b"),
            "[runner]\r\nmode = \"b\" # c\r\nx = 1\r\n");
  EXPECT_EQ(set_ok("[runner]\r\nx = 1\r\n\r\n[y]\r\n", "b"),
            "[runner]\r\nx = 1\r\nmode = \"b\"\r\n\r\n[y]\r\n");
  EXPECT_EQ(set_ok("[a]\r\nx = 1\r\n", "b"), "[a]\r\nx = 1\r\n\r\n[runner]\r\nmode = \"b\"\r\n");
}

TEST(TomlEdit, ValuesAreEscaped) {
  EXPECT_EQ(set_ok("[runner]\nmode = \"a\"\n", "say \"hi\"\\ \t\n\x01\x7f é"),
            "[runner]\nmode = \"say \\\"hi\\\"\\\\ \\t\\n\\u0001\\u007F é\"\n");
  EXPECT_EQ(toml_basic_string("a\rb\bc\f"), "\"a\\rb\\bc\\f\"");
  EXPECT_EQ(set_error("[runner]\n", "runner", "mode", "\xff"),
            "setting runner.mode: not valid UTF-8");
}

TEST(TomlEdit, NamesThatAreNotBareKeysAreQuoted) {
  EXPECT_EQ(set_ok("", "v", "my table", "a.b"), "[\"my table\"]\n\"a.b\" = \"v\"\n");
  EXPECT_EQ(set_ok("[\"my table\"]\n\"a.b\" = 1\n", "v", "my table", "a.b"),
            "[\"my table\"]\n\"a.b\" = \"v\"\n");
}

TEST(TomlEdit, FormsThatCannotBeEditedSafelyAreErrors) {
  EXPECT_EQ(set_error("runner = {mode = \"x\"}\n"),
            "setting runner.mode: [runner] is an inline table (runner = {…}), not edited");
  EXPECT_EQ(
      set_error("runner.mode = \"x\"\n"),
      "setting runner.mode: set by the dotted key 'runner.mode' at the top level, not edited");
  EXPECT_EQ(set_error("runner.max = 3\n"),
            "setting runner.mode: [runner] is defined by dotted keys (runner.max = …) at the top "
            "level, not edited");
  EXPECT_EQ(set_error("runner = \"x\"\n"), "setting runner.mode: 'runner' is not a table");
  EXPECT_EQ(set_error("[runner]\nmode = \"\"\"\nmulti\n\"\"\"\n"),
            "setting runner.mode: the value is a multi-line string, not edited");
  EXPECT_EQ(set_error("[runner]\nmode = '''x'''\n"),
            "setting runner.mode: the value is a multi-line string, not edited");
  EXPECT_EQ(set_error("[[runner]]\nmode = \"a\"\n"),
            "setting runner.mode: [[runner]] is an array of tables, not edited");
  EXPECT_EQ(set_error("[runner.mode]\nx = 1\n"),
            "setting runner.mode: 'runner.mode' is a table ([runner.mode]), not a string");
  EXPECT_EQ(set_error("[runner]\nmode.x = 1\n"),
            "setting runner.mode: 'runner.mode' is a table (mode.x = …), not a string");
}

TEST(TomlEdit, MultiLineStringsElsewhereAreSkippedWhole) {
  const std::string before =
      "[a]\ntext = \"\"\"\n[runner]\nmode = \"fake\"\n\"\"\"\n[runner]\nmode = \"real\"\n";
  EXPECT_EQ(set_ok(before, "x"),
            "[a]\ntext = \"\"\"\n[runner]\nmode = \"fake\"\n\"\"\"\n[runner]\nmode = \"x\"\n");
  const std::string literal = "[a]\ntext = '''\nmode = 1\n'''\n[runner]\n";
  EXPECT_EQ(set_ok(literal, "x"), "[a]\ntext = '''\nmode = 1\n'''\n[runner]\nmode = \"x\"\n");
}

TEST(TomlEdit, InvalidInputIsAnErrorWithTomlsMessageAndLine) {
  auto err = set_error("[runner]\nmode = \n");
  EXPECT_EQ(err.rfind("invalid TOML: line 2, column ", 0), 0u) << err;
  err = set_error("[runner]\nmode = 1\nmode = 2\n");
  EXPECT_EQ(err.rfind("invalid TOML: line 3, column ", 0), 0u) << err;
  EXPECT_EQ(set_error("[runnér]\n"),
            "invalid TOML: line 1, column 6: a non-ASCII character outside a string or comment");
}

}  // namespace
}  // namespace ctxkit::core
