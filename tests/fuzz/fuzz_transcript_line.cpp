// One transcript line as the context meter reads it.
#include <cstdint>
#include <string_view>

#include "claude/transcript_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  (void)ctxkit::claude::may_matter_for_meter(line);
  auto parsed = ctxkit::claude::parse_transcript_line(line);
  if (parsed) (void)(parsed->is_reading(true) || parsed->is_compact_boundary());
  return 0;
}
