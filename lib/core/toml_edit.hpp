#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::core {

// Returns `text` (a TOML document) with `table`.`key` set to the TOML basic string `value`
// (escaped as TOML requires), changing nothing else byte for byte. `table` is one top-level table
// name (not a dotted path); names that are not bare keys are written quoted.
//
// - An existing `key = …` line in [table] (the key bare or quoted) has its value replaced,
//   keeping the indentation, the spacing and a trailing comment.
// - A missing key is added as the table's last key line: after its last non-blank line, where
//   comment lines that a blank line separates from the table's keys are taken to belong to what
//   follows; with the indentation of the table's last key line.
// - A missing table is appended at the end: "\n[table]\nkey = \"value\"\n", with one newline
//   before when the text does not end with one (an empty text becomes "[table]\nkey = …\n").
// Inserted lines end as the document's first line does (CRLF or LF).
//
// Errors (kind Invalid): the forms that cannot be edited safely (the table set through an inline
// table `runner = {mode = "x"}` or dotted keys `runner.x = …` at the top level, `runner` not a
// table, the key a multi-line string, a table itself, or [[table]] an array of tables), a value
// or name that is not UTF-8, and invalid input TOML ("invalid TOML: line L, column C: what").
// The result is parsed with toml++ and checked to hold the value before it is returned.
[[nodiscard]] Result<std::string> set_toml_string(std::string_view text, std::string_view table,
                                                  std::string_view key, std::string_view value);

// `value` as a TOML basic string, quotes included.
std::string toml_basic_string(std::string_view value);

}  // namespace ctxkit::core
