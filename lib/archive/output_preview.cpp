#include "archive/output_preview.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace ctxkit::archive {

namespace {
bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
// The note line's own size, about: what a preview must save at least to be worth it.
constexpr size_t kNoteBytes = 256;
}  // namespace

ByteCounts count_bytes(std::string_view text) {
  // Eight bytes at a time: a byte is a newline when it XORs to zero with '\n', a UTF-8
  // continuation when its top bits are 10. Both tests are exact per byte (no carry crosses a
  // byte: the low seven bits are added apart from the top one).
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kHigh = 0x8080808080808080ull;
  // How many bytes have their top bit set in `x` (only top bits set): a multiply sums them into the
  // highest byte (no popcnt instruction is assumed).
  auto top_bits = [](uint64_t x) { return ((x >> 7) * 0x0101010101010101ull) >> 56; };
  ByteCounts out;
  const char* p = text.data();
  size_t n = text.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t t = w ^ 0x0a0a0a0a0a0a0a0aull;
    const uint64_t nonzero = ((t & kLow7) + kLow7) | t;  // top bit set where the byte is not 0
    out.newlines += top_bits(~nonzero & kHigh);
    out.continuations += top_bits(w & ~(w << 1) & kHigh);
  }
  for (; n > 0; ++p, --n) {
    out.newlines += *p == '\n';
    out.continuations += continuation(*p);
  }
  return out;
}

size_t utf8_cut_before(std::string_view text, size_t at) {
  if (at >= text.size()) {
    // The end: before a last sequence that the text does not hold whole.
    const size_t n = text.size();
    for (size_t back = 1; back <= 4 && back <= n; ++back) {
      const auto c = static_cast<unsigned char>(text[n - back]);
      if (continuation(static_cast<char>(c))) continue;
      const size_t need = c < 0x80           ? 1
                          : (c >> 5) == 0x6  ? 2
                          : (c >> 4) == 0xE  ? 3
                          : (c >> 3) == 0x1E ? 4
                                             : 1;
      return back >= need ? n : n - back;
    }
    return n;
  }
  // Back over continuation bytes (at most 3) to the lead byte of the sequence `at` falls in.
  size_t cut = at;
  for (int i = 0; i < 3 && cut > 0 && continuation(text[cut]); ++i) --cut;
  return continuation(text[cut]) ? at : cut;
}

size_t utf8_cut_after(std::string_view text, size_t at) {
  size_t cut = at;
  for (int i = 0; i < 3 && cut < text.size() && continuation(text[cut]); ++i) ++cut;
  return cut < text.size() && continuation(text[cut]) ? at : cut;
}

PreviewBuilder::PreviewBuilder(PreviewLimits limits) : limits_(limits) {
  head_.reserve(limits_.head_bytes);
}

void PreviewBuilder::add(std::string_view chunk) {
  if (chunk.empty()) return;
  if (head_.size() < limits_.head_bytes)
    head_.append(chunk.substr(0, limits_.head_bytes - head_.size()));
  const size_t keep = limits_.tail_bytes + 1;
  tail_.append(chunk.size() > keep ? chunk.substr(chunk.size() - keep) : chunk);
  if (tail_.size() > 2 * keep) tail_.erase(0, tail_.size() - keep);
  const ByteCounts n = count_bytes(chunk);
  newlines_ += n.newlines;
  figures_.chars += chunk.size() - n.continuations;
  figures_.bytes += chunk.size();
  last_ = chunk.back();
}

bool PreviewBuilder::worth_capping() const {
  return figures_.bytes > limits_.head_bytes + limits_.tail_bytes + kNoteBytes;
}

std::string PreviewBuilder::preview(const std::string& handle) {
  const uint64_t bytes = figures_.bytes;
  figures_.lines = newlines_ + (bytes > 0 && last_ != '\n' ? 1 : 0);
  if (!worth_capping()) return {};
  // The head: whole lines within its share, else the first line cut at a character's start.
  std::string_view head(head_);
  size_t head_end = head.rfind('\n');
  head_end = head_end == std::string_view::npos ? utf8_cut_before(head, head.size()) : head_end + 1;
  // The tail: the last tail_bytes bytes (plus the byte before them), whole lines when a line
  // starts in them, else the last line's end cut at a character's start.
  const size_t keep = std::min<size_t>(tail_.size(), limits_.tail_bytes + 1);
  std::string_view ring = std::string_view(tail_).substr(tail_.size() - keep);  // from bytes-keep
  std::string_view tail = ring.substr(1);
  size_t rel = tail.find('\n');
  rel = rel == std::string_view::npos || rel + 1 >= tail.size() ? utf8_cut_after(tail, 0) : rel + 1;
  tail = tail.substr(rel);
  const uint64_t tail_start = bytes - tail.size();
  figures_.omitted_bytes = tail_start - head_end;
  figures_.first_omitted_line =
      1 + static_cast<uint64_t>(
              std::count(head.begin(), head.begin() + static_cast<long>(head_end), '\n'));
  // Newlines from the byte before the tail to the end (the byte before is ring[rel]).
  const std::string_view from_before = ring.substr(rel);
  figures_.last_omitted_line =
      1 + newlines_ -
      static_cast<uint64_t>(std::count(from_before.begin(), from_before.end(), '\n'));
  figures_.last_omitted_line = std::max(figures_.last_omitted_line, figures_.first_omitted_line);

  std::string out;
  out.reserve(head_end + tail.size() + kNoteBytes + handle.size() * 2);
  out.append(head.substr(0, head_end));
  if (head_end == 0 || head[head_end - 1] != '\n') out += '\n';
  const auto a = figures_.first_omitted_line, b = figures_.last_omitted_line;
  out += fmt::format(
      "[ctxkit: lines {}-{} of {} ({} of {} bytes) left out here; the whole output is archived. "
      "Get them with archive_show {{\"handle\": \"{}\", \"lines\": \"{}:{}\"}} (or a \"search\"), "
      "or in a shell: ctx-search --show {} --lines {}:{}]\n",
      a, b, figures_.lines, figures_.omitted_bytes, bytes, handle, a, b, handle, a, b);
  out.append(tail);
  return out;
}

}  // namespace ctxkit::archive
