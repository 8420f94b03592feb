// The runner's reader of `claude -p --output-format stream-json`: a result line of N small
// objects (once read in quadratic time). Run: build-bench/bench/bench_stream_result; the reported
// complexity should be O(N).
#include <benchmark/benchmark.h>

#include <string>

#include "claude/stream_result.hpp"

namespace {

std::string result_line(int64_t objects) {
  std::string line = R"({"duration_api_ms":5,"junk":[)";
  for (int64_t i = 0; i < objects; ++i) line += i ? R"(,{"a":1})" : R"({"a":1})";
  line +=
      R"(],"type":"result","subtype":"success","result":"end","usage":{"input_tokens":3,"output_tokens":4}})";
  return line;
}

void BM_ResultLine(benchmark::State& state) {
  const std::string line = result_line(state.range(0));
  for (auto _ : state) {
    ctxkit::claude::StreamResultReader r;
    r.feed_line(line);
    if (!r.result().has_result) state.SkipWithError("no result");
    benchmark::DoNotOptimize(r.result().usage);
  }
  state.SetComplexityN(state.range(0));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(line.size()));
}
BENCHMARK(BM_ResultLine)
    ->RangeMultiplier(4)
    ->Range(10'000, 640'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

BENCHMARK_MAIN();
