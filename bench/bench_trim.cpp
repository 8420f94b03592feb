// ctx-trim against its floors, on generated transcripts of 100 MB and 1 GB (cached in
// $CTXKIT_BENCH_DIR, default /var/tmp/ctxkit-bench), each measure the median of several runs:
//   scan:   ctx-trim --dry-run          vs  wc -l on the same file   (target: >= 40% of its
//   throughput) trim:   ctx-trim as a user runs it (default configuration, fresh state directory
//   each run:
//           archive copy, trimmed copy, lineage; indexing detached)
//                                       vs  dd conv=fsync twice       (target: <= 2x its time)
//           peak RSS of ctx-trim                                      (target: <= 64 MB)
//   index:  indexing the archived copy alone (in this process)
//                                       vs  ctx-trim --dry-run        (target: <= 5x its time)
//   found:  from ctx-trim returning to ctx-search finding a word of the session
//                                       vs  ctx-trim --dry-run        (target: <= 5x its time)
// Between runs the detached indexer is waited for, so that it never runs beside a measure.
// Each ratio is also written to $CTXKIT_BENCH_FIGURES (bench/figures.py) with its noise: the
// spread of the ratio over the runs (1.4826 x its median absolute deviation; each run measures
// both sides of it, one after the other).
//
//   bench_trim BIN_DIR [RUNS] [SIZES_MB, comma-separated: 100,1024]
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "archive/indexer.hpp"
#include "core/locations.hpp"
#include "transcript_gen.hpp"
#include "util/process.hpp"

namespace {
namespace fs = std::filesystem;

struct Run {
  double seconds;
  long max_rss_kb;
};

Run run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> env_store;
    std::vector<char*> envp, args;
    for (const auto& [k, v] : env) env_store.push_back(k + "=" + v);
    for (auto& e : env_store) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::FILE* null = std::fopen("/dev/null", "w");
    ::dup2(fileno(null), 1);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "{} failed ({})\n", argv[0], status);
    std::exit(1);
  }
  return {s, ru.ru_maxrss};
}

// Waits until no indexer holds the archive's lock.
void wait_for_indexer(const ctxkit::core::Locations& loc) {
  int fd = ::open(loc.index_lock().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::flock(fd, LOCK_EX);
  ::close(fd);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The spread of num[i] / den[i] * scale over the runs, robust to one disturbed run: 1.4826 x the
// median absolute deviation.
double ratio_noise(const std::vector<double>& num, const std::vector<double>& den,
                   double scale = 1) {
  std::vector<double> r;
  for (size_t i = 0; i < std::min(num.size(), den.size()); ++i)
    r.push_back(scale * num[i] / den[i]);
  if (r.size() < 2) return 0;
  const double m = median(r);
  std::vector<double> dev;
  for (double v : r) dev.push_back(std::abs(v - m));
  return 1.4826 * median(dev);
}

// One line for bench/figures.py, when $CTXKIT_BENCH_FIGURES names a file.
void figure(const std::string& name, double value, double noise, const std::string& target) {
  const char* path = std::getenv("CTXKIT_BENCH_FIGURES");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    fmt::print(f, "{}\t{:.4f}\t{:.4f}\t{}\n", name, value, noise, target);
    std::fclose(f);
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_trim BIN_DIR [RUNS]\n");
    return 1;
  }
  std::string trim = std::string(argv[1]) + "/ctx-trim";
  std::string search = std::string(argv[1]) + "/ctx-search";
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const char* d = std::getenv("CTXKIT_BENCH_DIR");
  fs::path dir = d && *d ? d : "/var/tmp/ctxkit-bench";
  std::vector<uint64_t> sizes = {100, 1024};
  if (argc > 3) {
    sizes.clear();
    for (std::string_view rest = argv[3]; !rest.empty();) {
      auto comma = rest.find(',');
      sizes.push_back(std::stoull(std::string(rest.substr(0, comma))));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  bool ok = true;
  fmt::print("{:>7} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>8} {:>6}\n", "size",
             "wc -l s", "scan s", "scan%", "dd x2 s", "trim s", "ratio", "RSS", "index s", "x scan",
             "found s", "x scan");
  for (uint64_t mb : sizes) {
    fs::path home = dir / ("trim-home-" + std::to_string(mb));
    fs::remove_all(home);
    fs::path proj = home / ".claude/projects/-bench";
    fs::create_directories(proj);
    fs::path src = dir / ("transcript-" + std::to_string(mb) + "mb.jsonl");
    auto info = ctxkit::bench::generate_transcript(src, mb << 20);
    fs::path t = proj / (info.session_id + ".jsonl");
    fs::copy_file(src, t, fs::copy_options::overwrite_existing);
    std::map<std::string, std::string> env = {{"HOME", home.string()},
                                              {"PATH", "/usr/bin:/bin"},
                                              {"XDG_STATE_HOME", (home / "state").string()}};
    const auto loc = ctxkit::core::Locations::resolve(
        ctxkit::util::Env({env.begin(), env.end()}));  // what ctx-trim uses
    const std::string word = info.rare_tokens.empty() ? "function" : info.rare_tokens.back();
    std::vector<double> wc, scan, dd, full, index, found;
    long rss = 0;
    for (int i = 0; i < runs; ++i) {
      wc.push_back(run({"/usr/bin/wc", "-l", t.string()}, env).seconds);
      scan.push_back(run({trim, info.session_id, "--dry-run"}, env).seconds);
      fs::path d1 = dir / "dd-copy-1", d2 = dir / "dd-copy-2";
      double a = run({"/usr/bin/dd", "if=" + t.string(), "of=" + d1.string(), "bs=4M", "conv=fsync",
                      "status=none"},
                     env)
                     .seconds;
      double b = run({"/usr/bin/dd", "if=" + t.string(), "of=" + d2.string(), "bs=4M", "conv=fsync",
                      "status=none"},
                     env)
                     .seconds;
      fs::remove(d1);
      fs::remove(d2);
      dd.push_back(a + b);
      fs::remove_all(home /
                     "state");  // a fresh state directory: archive written afresh, nothing indexed
      for (const auto& e : fs::directory_iterator(proj))
        if (e.path() != t) fs::remove_all(e.path());
      Run r = run({trim, info.session_id}, env);
      auto returned = std::chrono::steady_clock::now();
      full.push_back(r.seconds);
      rss = std::max(rss, r.max_rss_kb);
      // Trim returned -> the session's words are found (ctx-search answers from what is indexed).
      while (true) {
        ctxkit::util::ProcessSpec spec;
        spec.argv = {search, word, "--json"};
        spec.env = env;
        auto res = ctxkit::util::run_process(spec);
        if (res && res->out.find(info.session_id) != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      found.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - returned).count());
      wait_for_indexer(loc);
      // Indexing alone: the archived copy into a new index.
      for (int shard = 0; shard < ctxkit::archive::kIndexShards; ++shard)
        for (const char* end : {"", "-wal", "-shm"}) fs::remove(loc.index_db(shard).string() + end);
      auto t0 = std::chrono::steady_clock::now();
      auto idx = ctxkit::archive::open_index(loc, nullptr);
      if (!idx || !ctxkit::archive::index_pending(*idx, loc, {})) {
        fmt::print(stderr, "indexing failed\n");
        return 1;
      }
      index.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    double mw = median(wc), ms = median(scan), md = median(dd), mf = median(full),
           mi = median(index), mfo = median(found);
    double scan_pct = 100.0 * mw / ms;
    fmt::print(
        "{:>5}MB {:>8.3f} {:>8.3f} {:>5.0f}% {:>8.3f} {:>8.3f} {:>5.2f}x {:>5} MB {:>8.3f} "
        "{:>5.1f}x {:>8.3f} {:>5.1f}x\n",
        mb, mw, ms, scan_pct, md, mf, mf / md, rss / 1024, mi, mi / ms, mfo, mfo / ms);
    const std::string at = fmt::format("trim.{}mb.", mb);
    figure(at + "scan_pct_of_wc", scan_pct, ratio_noise(wc, scan, 100), ">=40");
    figure(at + "trim_over_dd", mf / md, ratio_noise(full, dd), "<=2");
    figure(at + "rss_mb", static_cast<double>(rss) / 1024, 0, "<=64");
    figure(at + "index_over_scan", mi / ms, ratio_noise(index, scan), "<=5");
    figure(at + "found_over_scan", mfo / ms, ratio_noise(found, scan), "<=5");
    if (scan_pct < 40 || mf > 2 * md || rss > 64 * 1024 || mi > 5 * ms || mfo > 5 * ms) ok = false;
    fs::remove_all(home);
  }
  fmt::print("targets: {}\n", ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}
