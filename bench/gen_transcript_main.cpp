// ctx-gen-transcript SIZE_MB OUT.jsonl [PERCENT [SEED]]: writes a realistic transcript of about
// SIZE_MB megabytes and prints {"session_id","tool_use_id","context_tokens","bytes","rare_tokens"}
// for payloads and searches.
#include <fmt/core.h>

#include <cstdlib>

#include "transcript_gen.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: ctx-gen-transcript SIZE_MB OUT.jsonl [PERCENT]\n");
    return 1;
  }
  uint64_t mb = std::strtoull(argv[1], nullptr, 10);
  int pct = argc > 3 ? std::atoi(argv[3]) : 78;
  auto seed = argc > 4 ? static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10)) : 42u;
  auto g = ctxkit::bench::generate_transcript(argv[2], mb << 20, pct, seed);
  std::string rare;
  for (size_t i = 0; i < g.rare_tokens.size() && i < 8; ++i)
    rare += fmt::format("{}\"{}\"", i ? "," : "", g.rare_tokens[i]);
  fmt::print(
      "{{\"session_id\":\"{}\",\"tool_use_id\":\"{}\",\"context_tokens\":{},\"bytes\":{},\"rare_"
      "tokens\":[{}]}}\n",
      g.session_id, g.last_tool_use_id, g.last_context_tokens, g.bytes, rare);
  return 0;
}
