#pragma once

#include <fmt/core.h>

#include <string>

#include "trim/trimmer.hpp"

namespace ctxkit::test {

// Every figure of a trim, one tool a line: two runs that should agree compare equal as text, and
// a difference reads as the figure that differs.
inline std::string figures_of(const trim::TrimStats& s) {
  std::string out = fmt::format(
      "results_trimmed {} inputs_trimmed {} images_replaced {} images_only {} chars_saved {} "
      "lines {} changed {} unparsed {} usage_zeroed {} error_markers {}",
      s.results_trimmed, s.inputs_trimmed, s.images_replaced, s.results_images_only, s.chars_saved,
      s.lines, s.lines_changed, s.lines_unparsed, s.usage_zeroed, s.error_markers);
  for (const auto& [tool, t] : s.per_tool)
    out += fmt::format("\n{}: results {} chars {} trimmed {} saved {} inputs {}", tool, t.results,
                       t.result_chars, t.trimmed, t.chars_saved, t.inputs_trimmed);
  return out;
}

}  // namespace ctxkit::test
