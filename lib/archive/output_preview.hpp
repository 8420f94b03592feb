#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit::archive {

// How much of a capped output the model keeps. The end gets the larger share: the end of a test
// run or a build log is where the failure and its message are.
struct PreviewLimits {
  size_t head_bytes = 1000;
  size_t tail_bytes = 2000;
};

// What a preview shows and leaves out, for the event and the status line.
struct PreviewFigures {
  uint64_t bytes = 0;  // of the whole output
  uint64_t lines = 0;  // lines of the whole output (a last line without '\n' counts)
  uint64_t chars = 0;  // characters: bytes that are not a UTF-8 continuation byte
  uint64_t omitted_bytes = 0;
  uint64_t first_omitted_line = 0, last_omitted_line = 0;  // 1-based, inclusive
};

// Reads an output in chunks of any size (one pass, memory bounded by the limits whatever the
// output's size) and builds its preview: the first lines within head_bytes, the last lines within
// tail_bytes, and between them one line that says what was left out and how to get it. A line
// longer than its share is cut inside it, never inside a UTF-8 sequence. A NUL or an ill-formed
// byte is kept as it is (the answer's JSON writer replaces ill-formed bytes).
class PreviewBuilder {
 public:
  explicit PreviewBuilder(PreviewLimits limits);
  void add(std::string_view chunk);
  const PreviewFigures& figures() const { return figures_; }
  // Whether a preview would be shorter than the output by enough to be worth it (the output is
  // longer than both shares and the note line together).
  bool worth_capping() const;
  // The preview; `handle` names the archived output in the note line. Call after the last add().
  std::string preview(const std::string& handle);

 private:
  PreviewLimits limits_;
  std::string head_;
  std::string tail_;  // the last tail_bytes + 1 bytes seen (and up to as many before them)
  uint64_t newlines_ = 0;
  char last_ = '\0';
  PreviewFigures figures_;
};

// The newlines and the UTF-8 continuation bytes (10xxxxxx) of a text.
struct ByteCounts {
  uint64_t newlines = 0, continuations = 0;
};
ByteCounts count_bytes(std::string_view text);

// The byte where a cut at or before `at` keeps `text[0, cut)` free of a split UTF-8 sequence
// (at or past the end: before a last sequence the text does not hold whole).
size_t utf8_cut_before(std::string_view text, size_t at);
// The byte at or after `at` where a well-formed UTF-8 sequence (or a stray byte) starts.
size_t utf8_cut_after(std::string_view text, size_t at);

}  // namespace ctxkit::archive
