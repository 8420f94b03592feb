// Google Benchmark of the context meter on generated transcripts of 1 MB, 100 MB and 1 GB
// (cached in $CTXKIT_BENCH_DIR, default /var/tmp/ctxkit-bench). The tail scan's cost must not
// grow with the transcript's size.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "claude/transcript_line.hpp"
#include "context/context_meter.hpp"
#include "transcript_gen.hpp"

namespace {
namespace fs = std::filesystem;

fs::path bench_dir() {
  const char* d = std::getenv("CTXKIT_BENCH_DIR");
  fs::path p = d && *d ? d : "/var/tmp/ctxkit-bench";
  fs::create_directories(p);
  return p;
}

struct Sample {
  fs::path path;
  ctxkit::bench::GeneratedTranscript info;
};

const Sample& sample(uint64_t mb) {
  static std::map<uint64_t, Sample> cache;
  auto it = cache.find(mb);
  if (it != cache.end()) return it->second;
  Sample s;
  s.path = bench_dir() / ("transcript-" + std::to_string(mb) + "mb.jsonl");
  s.info = ctxkit::bench::generate_transcript(s.path, mb << 20);
  return cache.emplace(mb, s).first->second;
}

void BM_ScanTail(benchmark::State& state) {
  const Sample& s = sample(static_cast<uint64_t>(state.range(0)));
  for (auto _ : state) {
    auto r = ctxkit::context::scan_transcript_tail(s.path, s.info.last_tool_use_id);
    if (!r || !r->found_tool_use || r->reading->tokens != s.info.last_context_tokens)
      state.SkipWithError("wrong reading");
    benchmark::DoNotOptimize(r);
  }
  state.counters["file_MB"] = static_cast<double>(s.info.bytes) / (1 << 20);
}
BENCHMARK(BM_ScanTail)->Arg(1)->Arg(100)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_ParseAssistantLine(benchmark::State& state) {
  const Sample& s = sample(1);
  std::ifstream in(s.path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l))
    if (ctxkit::claude::may_matter_for_meter(l)) lines.push_back(l);
  size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& line : lines) {
      auto t = ctxkit::claude::parse_transcript_line(line);
      benchmark::DoNotOptimize(t);
      bytes += line.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ParseAssistantLine)->Unit(benchmark::kMillisecond);

void BM_Prefilter(benchmark::State& state) {
  const Sample& s = sample(100);
  std::ifstream in(s.path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  for (auto _ : state) {
    size_t n = 0, start = 0;
    while (start < all.size()) {
      size_t nl = all.find('\n', start);
      if (nl == std::string::npos) nl = all.size();
      n += ctxkit::claude::may_matter_for_meter(std::string_view(all).substr(start, nl - start));
      start = nl + 1;
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(all.size()));
}
BENCHMARK(BM_Prefilter)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
