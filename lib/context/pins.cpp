#include "context/pins.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "util/utf8.hpp"

namespace ctxkit::context {

namespace {

bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// Common English words a summary may drop or rephrase without losing the fact.
constexpr std::array<std::string_view, 40> kCommonWords{
    "and",   "are",  "but",  "can",   "for",  "from", "had",   "has",  "have",  "her",
    "his",   "its",  "our",  "she",   "that", "the",  "their", "them", "then",  "there",
    "these", "they", "this", "those", "was",  "were", "what",  "when", "where", "which",
    "who",   "will", "with", "would", "you",  "your", "into",  "onto", "been",  "being"};

bool significant(std::string_view word) {
  if (std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return true;
  if (word.size() < 3) return false;
  return std::find(kCommonWords.begin(), kCommonWords.end(), word) == kCommonWords.end();
}

std::vector<std::string> words_of(std::string_view normalized) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < normalized.size()) {
    size_t j = normalized.find(' ', i);
    if (j == std::string_view::npos) j = normalized.size();
    if (j > i) out.emplace_back(normalized.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The length of the UTF-8 sequence that starts with `lead` (the text is well-formed).
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace

Result<std::string> normalize_pin(std::string_view text) {
  if (text.find('\0') != std::string_view::npos)
    return fail("a pin cannot hold a NUL character", Error::Kind::Invalid);
  if (!util::is_valid_utf8(text))
    return fail("a pin must be UTF-8 text (this one is not)", Error::Kind::Invalid);
  std::string out;
  out.reserve(std::min(text.size(), kMaxPinChars * 4 + 1));
  size_t chars = 0;
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = sequence_length(c);
    if (c <= ' ' || c == 0x7f) {
      space = !out.empty();
      ++i;
      continue;
    }
    if (space) {
      out.push_back(' ');
      ++chars;
      space = false;
    }
    // Counting goes on past the limit so the error says how long the text is.
    if (chars < kMaxPinChars) out.append(text.substr(i, n));
    ++chars;
    i += n;
  }
  if (chars == 0) return fail("a pin cannot be empty", Error::Kind::Invalid);
  if (chars > kMaxPinChars)
    return fail(
        fmt::format("a pin is at most {} characters (this one has {})", kMaxPinChars, chars),
        Error::Kind::Invalid);
  return out;
}

std::string normalize_for_match(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_word_byte(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
  }
  return out;
}

SummaryText::SummaryText(std::string_view summary) {
  const std::string normalized = normalize_for_match(summary);
  padded_.reserve(normalized.size() + 2);
  padded_.push_back(' ');
  padded_.append(normalized);
  padded_.push_back(' ');
  words_ = words_of(padded_);
  std::sort(words_.begin(), words_.end());
  words_.erase(std::unique(words_.begin(), words_.end()), words_.end());
}

bool SummaryText::keeps(std::string_view pin) const {
  const std::string p = normalize_for_match(pin);
  if (p.empty()) return true;  // nothing a summary could hold or drop
  // Whole words: " p " within " summary ".
  std::string needle;
  needle.reserve(p.size() + 2);
  needle.push_back(' ');
  needle.append(p);
  needle.push_back(' ');
  if (padded_.find(needle) != std::string::npos) return true;
  bool any = false;
  for (const auto& w : words_of(p)) {
    if (!significant(w)) continue;
    any = true;
    if (!std::binary_search(words_.begin(), words_.end(), w)) return false;
  }
  return any;
}

std::string render_pin_list(std::string_view heading, const std::vector<std::string>& pins,
                            int64_t total, std::string_view list_command, size_t* shown) {
  if (shown) *shown = 0;
  if (pins.empty()) return {};
  std::string out(heading);
  out += '\n';
  size_t n = 0;
  for (const auto& p : pins) {
    if (static_cast<int64_t>(n) >= kMaxInjectedPins) break;
    if (out.size() + p.size() + 3 > kPinBudgetBytes) break;
    out += "- ";
    out += p;
    out += '\n';
    ++n;
  }
  const int64_t left =
      std::max<int64_t>(total, static_cast<int64_t>(pins.size())) - static_cast<int64_t>(n);
  if (left > 0)
    out += fmt::format("({} more pin{} not shown here: {})\n", left, left == 1 ? "" : "s",
                       list_command);
  if (shown) *shown = n;
  return out;
}

std::string precompact_instructions(const std::vector<std::string>& pins, int64_t total,
                                    std::string_view focus) {
  std::string out = render_pin_list(
      "Pinned facts: the summary must keep each of these word for word (the user pinned them; "
      "they still hold after this compaction):",
      pins, total, "they are listed by ctx-pin list");
  if (!focus.empty()) {
    if (!out.empty()) out += '\n';
    out += fmt::format("Focus of this compaction (the workflow's current step): {}\n", focus);
  }
  return out;
}

std::string restore_text(const std::vector<std::string>& missing) {
  return render_pin_list(
      "Pinned facts the last compaction's summary left out (re-stated by ctxkit; they still "
      "hold):",
      missing, static_cast<int64_t>(missing.size()), "ctx-pin list shows every pin");
}

std::string pins_status_words(int64_t kept, int64_t total, int64_t restored) {
  if (restored > 0) return fmt::format("pins {}/{} kept, {} restored", kept, total, restored);
  return fmt::format("pins {}/{} kept", kept, total);
}

}  // namespace ctxkit::context
