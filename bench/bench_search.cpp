// The searchable archive on a generated archive of >= 1 GB (12 sessions of ~90 MB, cached in
// $CTXKIT_BENCH_DIR, default /var/tmp/ctxkit-bench):
//   indexing throughput (MB/s of transcript),
//   the index's size against the archive's (target: <= 30%),
//   ctx-search latency (whole process, median of runs) for each query class: selective
//   (identifiers that occur once, error strings), a common word, two common words, an identifier
//   beside a common phrase (target: every class <= 50 ms; indexing >= 67 MB/s),
//   indexing an appended 1 MB in a small archive and in the 1 GB one (target: the same cost).
//
//   bench_search BIN_DIR [RUNS]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "archive/indexer.hpp"
#include "core/locations.hpp"
#include "store/search_index.hpp"
#include "transcript_gen.hpp"
#include "util/env.hpp"
#include "util/process.hpp"

namespace {
namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

double ms_since(clk::time_point t) {
  return std::chrono::duration<double, std::milli>(clk::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Appends ~`bytes` of realistic lines (another generated transcript's) to `to`.
void append_mb(const fs::path& to, const fs::path& scratch, uint64_t bytes, uint32_t seed) {
  ctxkit::bench::generate_transcript(scratch, bytes, 50, seed);
  std::ifstream in(scratch, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::app);
  out << in.rdbuf();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_search BIN_DIR [RUNS]\n");
    return 1;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string search_bin = std::string(argv[1]) + "/ctx-search";
  int runs = argc > 2 ? std::atoi(argv[2]) : 21;
  const char* d = std::getenv("CTXKIT_BENCH_DIR");
  fs::path dir = fs::path(d && *d ? d : "/var/tmp/ctxkit-bench") / "search";
  fs::path state = dir / "state/ctxkit";
  fs::path archive = state / "archive/-bench";
  fs::create_directories(archive);
  // The folders as ctx-search resolves them, for a state folder given outright.
  auto locations = [&](const fs::path& state_dir) {
    return ctxkit::core::Locations::resolve(ctxkit::util::Env({{"HOME", dir.string()}}),
                                            state_dir.string());
  };
  const ctxkit::core::Locations loc = locations(state);
  auto remove_index = [](const ctxkit::core::Locations& where) {
    for (int shard = 0; shard < ctxkit::archive::kIndexShards; ++shard)
      for (const char* end : {"", "-wal", "-shm"}) fs::remove(where.index_db(shard).string() + end);
  };
  remove_index(loc);

  // 1. The archive and its index.
  std::vector<std::string> rare;
  uint64_t total = 0;
  std::vector<std::pair<fs::path, std::string>> files;
  for (uint32_t i = 0; i < 12; ++i) {
    fs::path f = archive / fmt::format("session-{:02}.jsonl", i);
    auto g = ctxkit::bench::generate_transcript(f, 90ull << 20, 60, 1000 + i);
    total += g.bytes;
    for (size_t k = 0; k < 3 && k < g.rare_tokens.size(); ++k) rare.push_back(g.rare_tokens[k]);
    files.emplace_back(f, g.session_id);
  }
  // As the indexer runs it: every shard at once, over whatever the archive holds.
  auto t0 = clk::now();
  auto index = ctxkit::archive::open_index(loc, nullptr);
  if (!index) {
    fmt::print(stderr, "{}\n", index.error().message);
    return 1;
  }
  auto run = ctxkit::archive::index_pending(*index, loc, {});
  if (!run || !run->first_error.empty()) {
    fmt::print(stderr, "{}\n", run ? run->first_error : run.error().message);
    return 1;
  }
  double index_s = ms_since(t0) / 1000;
  double index_bytes = 0;
  for (int shard = 0; shard < ctxkit::archive::kIndexShards; ++shard) {
    for (const char* end : {"", "-wal"}) {
      std::error_code ec;
      auto size = fs::file_size(loc.index_db(shard).string() + end, ec);
      if (!ec) index_bytes += static_cast<double>(size);
    }
  }
  double index_mb = index_bytes / (1 << 20);
  double mbps = static_cast<double>(total) / (1 << 20) / index_s;
  double pct = 100.0 * index_mb / (static_cast<double>(total) / (1 << 20));
  fmt::print(
      "archive: {:.2f} GB in {} sessions indexed in {:.1f} s ({:.1f} MB/s, {} shards); index "
      "{:.0f} MB ({:.0f}% of the archive)\n",
      static_cast<double>(total) / (1 << 30), files.size(), index_s, mbps,
      ctxkit::archive::kIndexShards, index_mb, pct);
  bool ok = mbps >= 67 && pct <= 30;

  // 2. Search latency, whole process.
  std::map<std::string, std::string> env = {{"HOME", dir.string()},
                                            {"PATH", "/usr/bin:/bin"},
                                            {"XDG_STATE_HOME", (dir / "state").string()}};
  auto latency = [&](const std::string& query) {
    std::vector<double> t;
    size_t hits = 0;
    for (int i = 0; i < runs; ++i) {
      ctxkit::util::ProcessSpec spec;
      spec.argv = {search_bin, query, "--limit", "20"};
      spec.env = env;
      auto s = clk::now();
      auto r = ctxkit::util::run_process(spec);
      t.push_back(ms_since(s));
      if (r) hits = static_cast<size_t>(std::count(r->out.begin(), r->out.end(), '\n')) / 2;
    }
    return std::make_pair(median(t), hits);
  };
  std::vector<std::pair<std::string, std::string>> queries;
  for (size_t i = 0; i < rare.size() && i < 6; ++i) queries.emplace_back("identifier", rare[i]);
  queries.emplace_back("error string", "undefined reference to `" + rare.front() + "'");
  queries.emplace_back("file:line", "src/engine.c:42 " + rare.back());
  queries.emplace_back("common word", "function");
  queries.emplace_back("two common", "function return");
  queries.emplace_back("common words", "delta gamma return");
  std::vector<double> selective;
  std::map<std::string, double> worst;
  fmt::print("{:<14} {:>10} {:>6}  query\n", "kind", "median ms", "hits");
  for (const auto& [kind, q] : queries) {
    auto [ms, hits] = latency(q);
    fmt::print("{:<14} {:>10.1f} {:>6}  {}\n", kind, ms, hits, q);
    if (kind == "identifier") selective.push_back(ms);
    worst[kind] = std::max(worst[kind], ms);
  }
  double sel = median(selective);
  fmt::print(
      "selective queries: median {:.1f} ms; slowest class {:.1f} ms (target: every class <= 50 "
      "ms)\n",
      sel, std::max_element(worst.begin(), worst.end(), [](auto& a, auto& b) {
             return a.second < b.second;
           })->second);
  for (const auto& [kind, ms] : worst)
    if (ms > 50) ok = false;

  // 3. Appending 1 MB to a session in a small archive and in the 1 GB one.
  fs::path small_state = dir / "small/ctxkit";
  fs::create_directories(small_state / "archive/-bench");
  fs::path small_file = small_state / "archive/-bench/session-small.jsonl";
  auto sg = ctxkit::bench::generate_transcript(small_file, 10ull << 20, 60, 7);
  const ctxkit::core::Locations small_loc = locations(small_state);
  remove_index(small_loc);
  auto small_index = ctxkit::archive::open_index(small_loc, nullptr);
  (void)ctxkit::archive::index_pending(*small_index, small_loc, {});
  std::vector<double> small_t, big_t;
  for (uint32_t i = 0; i < 5; ++i) {
    append_mb(small_file, dir / "append.jsonl", 1 << 20, 500 + i);
    auto s = clk::now();
    (void)ctxkit::archive::index_pending(*small_index, small_loc, {});
    small_t.push_back(ms_since(s));
    append_mb(files.front().first, dir / "append.jsonl", 1 << 20, 600 + i);
    s = clk::now();
    (void)ctxkit::archive::index_pending(*index, loc, {});
    big_t.push_back(ms_since(s));
  }
  double ms_small = median(small_t), ms_big = median(big_t);
  fmt::print(
      "indexing an appended 1 MB: {:.0f} ms in a 10 MB archive, {:.0f} ms in the {:.2f} GB one "
      "({:.2f}x)\n",
      ms_small, ms_big, static_cast<double>(total) / (1 << 30), ms_big / ms_small);
  if (ms_big > 2 * ms_small + 20) ok = false;
  fmt::print("targets: {}\n", ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}
