// The trimmer's in-place line rewrite. The input is up to two lines (a tool_use line, then its
// result); a line that was valid JSON must still be valid JSON after the rewrite, and a second
// trim of the output must change nothing more than the first did.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trim/trimmer.hpp"

namespace {
ctxkit::trim::TrimOptions options() {
  ctxkit::trim::TrimOptions o;
  o.threshold = 16;
  o.tools = {"Bash", "Read"};
  o.new_session_id = "bbbbbbbb-2222-4222-8222-222222222222";
  o.notice_file = "/archive/p.jsonl";
  return o;
}

std::vector<std::string> run(const std::vector<std::string>& lines) {
  ctxkit::trim::Trimmer trimmer(options());
  std::vector<std::string> out;
  uint64_t n = 0;
  for (const auto& l : lines) {
    std::string padded = l + std::string(64, '\0');  // as the line reader pads
    std::string o;
    trimmer.process(std::string_view(padded.data(), l.size()), padded.size(), ++n, &o);
    out.push_back(std::move(o));
  }
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  size_t nl = text.find('\n');
  lines.push_back(text.substr(0, nl));
  if (nl != std::string::npos) lines.push_back(text.substr(nl + 1));
  auto once = run(lines);
  for (size_t i = 0; i < lines.size(); ++i)
    if (nlohmann::json::accept(lines[i]) && !nlohmann::json::accept(once[i])) std::abort();
  if (run(once) != once) std::abort();
  return 0;
}
