#pragma once

// Pins: short facts that must survive a compaction. Pure: the text rules, the check of a pin
// against a compaction's summary, and the texts given to the summarizer and to the model.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::context {

// The limits of pins (README "Pins").
// A pin's text, in characters (Unicode code points) once its whitespace is collapsed.
inline constexpr size_t kMaxPinChars = 500;
// Pins a scope (a line of work, a project) holds; one more is refused.
inline constexpr int64_t kMaxPinsPerScope = 100;
// Pins given to the summarizer or re-injected at most, oldest first.
inline constexpr int64_t kMaxInjectedPins = 100;
// The bytes of pin text one injection holds at most. The client cuts a PreCompact hook's output
// at 10,000 characters and persists a longer SessionStart/UserPromptSubmit additionalContext to a
// file (the model then sees a 2 KB preview): measured on 2.1.197 and 2.1.332. 8,000 bytes leaves
// room for the heading and for the other hooks' text.
inline constexpr size_t kPinBudgetBytes = 8000;

// A pin's text as stored: well-formed UTF-8, every run of whitespace and control characters one
// space, trimmed, at most kMaxPinChars characters. A NUL, ill-formed UTF-8, an empty text or a
// longer one is an error of kind Invalid ("a pin is at most 500 characters (this one has
// 1048576)").
[[nodiscard]] Result<std::string> normalize_pin(std::string_view text);

// A compaction summary prepared for checking pins against it: its normalized text (ASCII lowered,
// each run of characters that are not letters or digits one space) and its words.
class SummaryText {
 public:
  explicit SummaryText(std::string_view summary);
  // Whether the summary kept `pin`: its normalized text occurs in the summary's, or every one of
  // its significant words does (a word of three or more characters, or one with a digit, that is
  // not a common English word), in any order. A pin with no significant word needs the first.
  bool keeps(std::string_view pin) const;

 private:
  std::string padded_;              // " <normalized summary> "
  std::vector<std::string> words_;  // sorted, unique
};

// The text normalized the way SummaryText matches it.
std::string normalize_for_match(std::string_view text);

// Pins rendered as a list under `heading` ("- text" a line), oldest first, as many as fit in
// kPinBudgetBytes and kMaxInjectedPins; `total` is how many there are in all (more than given
// when the store was read to a limit). Those left out are counted in a last line that names
// `list_command`. Empty when `pins` is.
std::string render_pin_list(std::string_view heading, const std::vector<std::string>& pins,
                            int64_t total, std::string_view list_command, size_t* shown = nullptr);

// The PreCompact hook's instructions to the summarizer: the pins to keep word for word, and the
// workflow step's compaction focus when one is given.
std::string precompact_instructions(const std::vector<std::string>& pins, int64_t total,
                                    std::string_view focus);

// The text re-injected after a compaction that dropped `missing`.
std::string restore_text(const std::vector<std::string>& missing);

// "pins 3/5 kept, 2 restored" (", 2 restored" only when some were; "pins 5/5 kept").
std::string pins_status_words(int64_t kept, int64_t total, int64_t restored);

}  // namespace ctxkit::context
