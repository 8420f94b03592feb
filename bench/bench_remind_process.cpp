// Whole-process benchmark of ctx-remind: each run is a fresh process started with posix_spawn,
// the payload on stdin, stdout and stderr to /dev/null, exactly like the floor program (a trivial
// C program that reads stdin to its end and exits: bench/stdin_floor.c). Transcripts of 1 MB,
// 100 MB and 1 GB are generated (cached in $CTXKIT_BENCH_DIR, default /var/tmp/ctxkit-bench).
// Prints medians and ratios and checks the targets: ctx-remind median <= 1.5x the floor on a
// small payload whatever the transcript's size; median on 1 GB within 25% of 1 MB.
// Then hook payloads of 1, 10 and 100 MB (a PostToolUse of an Edit that carries a whole file)
// beside the floor reading the same payload: ctx-remind median <= 2x the floor's, peak RSS
// <= 16 MB whatever the size.
//
// The home holds the client's settings files as a user has them (write_client_settings).
// Then a home whose ~/.claude.json is 5 MB (a user of many projects, with the server's windows in
// its client data): ctx-remind on a small payload <= 1.5x the floor while the file stays as it was
// (the hints come from the meter's cache), and the cost when the client wrote the file again
// before the call, which re-reads it: once a session (both releases write it as they start and
// not during a turn's tool calls, seen with a hook logging its time), <= 20x as a guard.
// Each ratio is also written to $CTXKIT_BENCH_FIGURES (bench/figures.py) with its noise: the runs
// are interleaved (floor, ctx-remind, floor, ...), cut into 5 consecutive blocks, and the noise is
// the spread of the ratio over the blocks (1.4826 x its median absolute deviation).
//
//   bench_remind_process BIN_DIR FLOOR_BIN [RUNS] [all|transcript|payload|state]
#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
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
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "transcript_gen.hpp"

extern char** environ;

namespace {
namespace fs = std::filesystem;

struct Run {
  double micros = 0;
  long max_rss_kb = 0;
};

Run run_measured(const std::string& bin, const fs::path& payload, char** envp) {
  int in = ::open(payload.c_str(), O_RDONLY);
  int devnull = ::open("/dev/null", O_WRONLY);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in, 0);
  posix_spawn_file_actions_adddup2(&fa, devnull, 1);
  posix_spawn_file_actions_adddup2(&fa, devnull, 2);
  char* argv[] = {const_cast<char*>(bin.c_str()), nullptr};
  pid_t pid;
  auto t0 = std::chrono::steady_clock::now();
  if (::posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv, envp) != 0) {
    fmt::print(stderr, "cannot start {}\n", bin);
    std::exit(1);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  auto t1 = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&fa);
  ::close(in);
  ::close(devnull);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "{} exited with {}\n", bin, status);
    std::exit(1);
  }
  return {std::chrono::duration<double, std::micro>(t1 - t0).count(), usage.ru_maxrss};
}

double run_once(const std::string& bin, const fs::path& payload, char** envp) {
  return run_measured(bin, payload, envp).micros;
}

// A PostToolUse payload of about `bytes` for an Edit of a big source file: the file's text is in
// tool_input.old_string and again in tool_response.originalFile (lines of code with quotes,
// backslashes, tabs and non-ASCII, all escaped as Claude Code writes them).
void write_edit_payload(const fs::path& out, uint64_t bytes,
                        const ctxkit::bench::GeneratedTranscript& info, const fs::path& transcript,
                        const fs::path& cwd) {
  std::string file;
  for (uint64_t i = 0; file.size() < bytes / 2; ++i)
    file += fmt::format(
        R"(\tif (s[{}] == '\\' && name != \"caf\u00e9\") {{ return {}; }} // line {}\n)", i % 97, i,
        i);
  std::ofstream o(out, std::ios::binary);
  o << fmt::format(
      R"({{"session_id":"{}","transcript_path":"{}","cwd":"{}","hook_event_name":"PostToolUse",)"
      R"("tool_name":"Edit","tool_input":{{"file_path":"/src/big.cpp","old_string":"{}","new_string":"x",)"
      R"("replace_all":false}},"tool_response":{{"filePath":"/src/big.cpp","originalFile":"{}",)"
      R"("structuredPatch":[{{"oldStart":1,"lines":["-a","+b"]}}],"userModified":false}},)"
      R"("tool_use_id":"{}"}})",
      info.session_id, transcript.string(), cwd.string(), file, file, info.last_tool_use_id);
}

// The client's settings as a user has them (the hook reads where the client compacts from them):
// ~/.claude/settings.json with ctxkit's hooks, a status line and permissions (about 3 KB), and a
// project's .claude/settings.local.json that sets autoCompactWindow (the payload's cwd is `home`,
// so the project's .claude/settings.json is the user's file again).
void write_client_settings(const fs::path& home) {
  fs::create_directories(home / ".claude");
  nlohmann::json allow = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) allow.push_back(fmt::format("Bash(make target-{}:*)", i));
  auto hook = [](const char* cmd) {
    return nlohmann::json::array(
        {{{"matcher", ""}, {"hooks", {{{"type", "command"}, {"command", cmd}}}}}});
  };
  nlohmann::json user = {
      {"$schema", "https://json.schemastore.org/claude-code-settings.json"},
      {"model", "opus"},
      {"permissions", {{"allow", allow}, {"deny", {"Read(./.env)", "Read(./secrets/**)"}}}},
      {"env", {{"BASH_DEFAULT_TIMEOUT_MS", "120000"}}},
      {"statusLine", {{"type", "command"}, {"command", "ctx-status"}}},
      {"hooks",
       {{"PostToolUse", hook("ctx-remind")},
        {"PreToolUse", hook("ctx-gate")},
        {"Stop", hook("ctx-session-hook Stop")},
        {"SessionStart", hook("ctx-session-hook SessionStart")},
        {"PreCompact", hook("ctx-session-hook PreCompact")}}}};
  std::ofstream(home / ".claude/settings.json") << user.dump(2);
  nlohmann::json local = {
      {"permissions", {{"allow", {"Bash(npm test:*)", "WebFetch(domain:example.com)"}}}},
      {"autoCompactWindow", 400000}};
  std::ofstream(home / ".claude/settings.local.json") << local.dump(2);
}

// A ~/.claude.json of about `bytes` as the client keeps it for a user of many projects: per-project
// entries with allowed tools, MCP servers and history, the server's client data with per-model
// windows (rowan_thicket) and the bootstrap's windows cache.
void write_client_state(const fs::path& file, uint64_t bytes) {
  nlohmann::json projects = nlohmann::json::object();
  uint64_t written = 0;  // the entries' size as written with an indent of 2, nested twice
  for (int i = 0; written < bytes; ++i) {
    nlohmann::json history = nlohmann::json::array();
    for (int h = 0; h < 20; ++h)
      history.push_back({{"display", fmt::format("fix the failing test {} in module {}", h, i)},
                         {"pastedContents", nlohmann::json::object()}});
    projects[fmt::format("/home/user/src/project-{}", i)] = {
        {"allowedTools", {"Bash(make:*)", "Read"}},
        {"history", history},
        {"mcpServers", nlohmann::json::object()},
        {"lastCost", 1.25},
        {"lastSessionId", fmt::format("{:08x}-0000-4000-8000-000000000000", i)},
        {"hasTrustDialogAccepted", true}};
    const auto& entry = projects[fmt::format("/home/user/src/project-{}", i)];
    written += entry.dump(2).size() + entry.dump(2).size() / 4;  // the deeper indent, about
  }
  nlohmann::json state = {
      {"numStartups", 412},
      {"installMethod", "native"},
      {"autoUpdates", true},
      {"projects", projects},
      {"clientDataCacheSlots",
       {{"a", {{"at", 1}, {"data", {{"rowan_thicket", {{"claude-sonnet-4-6", 180000}}}}}}}}},
      {"autoCompactWindowsCache", {{"claude-opus-4-6", 190000}}}};
  std::ofstream(file) << state.dump(2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The spread of a ratio over repeated measures, robust to one disturbed block (a machine shared
// with other work has some): 1.4826 x the median absolute deviation (the standard deviation's
// estimate for normal data).
double spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = median(values);
  std::vector<double> dev;
  for (double v : values) dev.push_back(std::abs(v - m));
  return 1.4826 * median(dev);
}

// The spread of median(num) / median(den) over `blocks` consecutive blocks of the runs.
double ratio_noise(const std::vector<double>& num, const std::vector<double>& den, int blocks = 5) {
  const size_t n = std::min(num.size(), den.size());
  const size_t per = n / static_cast<size_t>(blocks);
  if (per == 0) return 0;
  std::vector<double> ratios;
  for (int b = 0; b < blocks; ++b) {
    std::vector<double> x(num.begin() + static_cast<long>(b * per),
                          num.begin() + static_cast<long>((b + 1) * per));
    std::vector<double> y(den.begin() + static_cast<long>(b * per),
                          den.begin() + static_cast<long>((b + 1) * per));
    ratios.push_back(median(x) / median(y));
  }
  return spread(ratios);
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
  if (argc < 3) {
    fmt::print(stderr, "usage: bench_remind_process BIN_DIR FLOOR_BIN [RUNS]\n");
    return 1;
  }
  std::string remind = std::string(argv[1]) + "/ctx-remind";
  std::string floor_bin = argv[2];
  int runs = argc > 3 ? std::atoi(argv[3]) : 300;
  std::string section = argc > 4 ? argv[4] : "all";
  const char* d = std::getenv("CTXKIT_BENCH_DIR");
  fs::path dir = d && *d ? d : "/var/tmp/ctxkit-bench";
  fs::create_directories(dir);
  fs::path home = dir / "home";
  fs::remove_all(home);
  fs::create_directories(home);
  write_client_settings(home);
  std::vector<std::string> env_store = {"HOME=" + home.string(), "PATH=/usr/bin:/bin",
                                        "XDG_STATE_HOME=" + (home / "state").string(),
                                        "XDG_CONFIG_HOME=" + (home / "config").string()};
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);

  bool ok = true;
  if (section == "all" || section == "transcript") {
    fmt::print("{:>8} {:>12} {:>14} {:>8}   ({} runs each, interleaved)\n", "size", "floor µs",
               "ctx-remind µs", "ratio", runs);
    std::map<uint64_t, double> medians;
    std::map<uint64_t, std::vector<double>> samples;
    for (uint64_t mb : {1ull, 100ull, 1024ull}) {
      fs::path t = dir / ("transcript-" + std::to_string(mb) + "mb.jsonl");
      auto info = ctxkit::bench::generate_transcript(t, mb << 20);
      nlohmann::json p = {{"session_id", info.session_id},
                          {"transcript_path", t.string()},
                          {"cwd", home.string()},
                          {"hook_event_name", "PostToolUse"},
                          {"tool_name", "Bash"},
                          {"tool_input", {{"command", "make test"}}},
                          {"tool_response", {{"stdout", "ok"}}},
                          {"tool_use_id", info.last_tool_use_id},
                          {"duration_ms", 12}};
      fs::path payload = dir / ("payload-" + std::to_string(mb) + "mb.json");
      std::ofstream(payload) << p.dump();
      for (int i = 0; i < 20; ++i) {
        run_once(floor_bin, payload, envp.data());
        run_once(remind, payload, envp.data());
      }
      std::vector<double> f, r;
      for (int i = 0; i < runs; ++i) {
        f.push_back(run_once(floor_bin, payload, envp.data()));
        r.push_back(run_once(remind, payload, envp.data()));
      }
      double mf = median(f), mr = median(r);
      medians[mb] = mr;
      samples[mb] = r;
      const double noise = ratio_noise(r, f);
      fmt::print("{:>6}MB {:>12.0f} {:>14.0f} {:>7.2f}x  (±{:.2f})\n", mb, mf, mr, mr / mf, noise);
      figure(fmt::format("remind.transcript.{}mb", mb), mr / mf, noise, "<=1.5");
      if (mr > 1.5 * mf) ok = false;
    }
    double growth = medians[1024] / medians[1];
    fmt::print("ctx-remind median on 1 GB / on 1 MB: {:.3f} (target <= 1.25)\n", growth);
    figure("remind.transcript.growth_1gb_over_1mb", growth, ratio_noise(samples[1024], samples[1]),
           "<=1.25");
    if (growth > 1.25) ok = false;
  }

  if (section == "all" || section == "payload") {
    // Hook payloads: one 1 MB transcript, payloads of 1, 10 and 100 MB, beside the floor reading
    // the same payload.
    fs::path t = dir / "transcript-1mb.jsonl";
    auto info = ctxkit::bench::generate_transcript(t, 1ull << 20);
    int payload_runs = std::max(25, runs / 6);
    fmt::print("\nhook payloads ({} runs each, interleaved)\n", payload_runs);
    fmt::print("{:>8} {:>10} {:>14} {:>8} {:>10}\n", "payload", "floor µs", "ctx-remind µs",
               "ratio", "peak RSS");
    for (uint64_t mb : {1ull, 10ull, 100ull}) {
      fs::path payload = dir / ("payload-edit-" + std::to_string(mb) + "mb.json");
      // Written by a child process: a spawned program starts from this process's memory map, so
      // its peak RSS would otherwise include the payload this process built.
      if (pid_t writer = ::fork(); writer == 0) {
        write_edit_payload(payload, mb << 20, info, t, home);
        ::_exit(0);
      } else {
        int status = 0;
        ::waitpid(writer, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          fmt::print(stderr, "writing {} failed\n", payload.string());
          return 1;
        }
      }
      for (int i = 0; i < 3; ++i) {
        run_once(floor_bin, payload, envp.data());
        run_once(remind, payload, envp.data());
      }
      std::vector<double> f, r;
      long rss = 0, rss_low = 1L << 40;
      for (int i = 0; i < payload_runs; ++i) {
        f.push_back(run_once(floor_bin, payload, envp.data()));
        Run m = run_measured(remind, payload, envp.data());
        r.push_back(m.micros);
        rss = std::max(rss, m.max_rss_kb);
        rss_low = std::min(rss_low, m.max_rss_kb);
      }
      const double mf = median(f), mr = median(r), noise = ratio_noise(r, f);
      const double rss_mb = static_cast<double>(rss) / 1024;
      fmt::print("{:>6}MB {:>10.0f} {:>14.0f} {:>7.2f}x {:>7.1f} MB  (±{:.2f})\n", mb, mf, mr,
                 mr / mf, rss_mb, noise);
      figure(fmt::format("remind.payload.{}mb", mb), mr / mf, noise, "<=2");
      figure(fmt::format("remind.payload.{}mb.rss_mb", mb), rss_mb,
             static_cast<double>(rss - rss_low) / 2048, "<=16");
      if (mr > 2 * mf || rss > 16 * 1024) ok = false;
    }
  }
  if (section == "all" || section == "state") {
    // A 5 MB ~/.claude.json, read from the meter's cache while it is unchanged, and again when
    // the client wrote it before the call.
    fs::path shome = dir / "home-state";
    fs::remove_all(shome);
    fs::create_directories(shome);
    write_client_settings(shome);
    const fs::path state_file = shome / ".claude.json";
    write_client_state(state_file, 5ull << 20);
    std::vector<std::string> senv_store = {"HOME=" + shome.string(), "PATH=/usr/bin:/bin",
                                           "XDG_STATE_HOME=" + (shome / "state").string(),
                                           "XDG_CONFIG_HOME=" + (shome / "config").string()};
    std::vector<char*> senvp;
    for (auto& e : senv_store) senvp.push_back(e.data());
    senvp.push_back(nullptr);
    fs::path t = dir / "transcript-1mb.jsonl";
    auto info = ctxkit::bench::generate_transcript(t, 1ull << 20);
    nlohmann::json p = {{"session_id", info.session_id},
                        {"transcript_path", t.string()},
                        {"cwd", shome.string()},
                        {"hook_event_name", "PostToolUse"},
                        {"tool_name", "Bash"},
                        {"tool_input", {{"command", "make test"}}},
                        {"tool_response", {{"stdout", "ok"}}},
                        {"tool_use_id", info.last_tool_use_id}};
    fs::path payload = dir / "payload-state.json";
    std::ofstream(payload) << p.dump();
    const int state_runs = std::max(25, runs / 3);
    fmt::print("\n~/.claude.json of {:.1f} MB ({} runs each, interleaved)\n",
               static_cast<double>(fs::file_size(state_file)) / (1 << 20), state_runs);
    for (const bool rewritten : {false, true}) {
      for (int i = 0; i < 5; ++i) {
        run_once(floor_bin, payload, senvp.data());
        run_once(remind, payload, senvp.data());
      }
      std::vector<double> f, r;
      for (int i = 0; i < state_runs; ++i) {
        if (rewritten) {
          // The client wrote the file again: a new time, and every other call a new size.
          if (i % 2) std::ofstream(state_file, std::ios::app) << ' ';
          fs::last_write_time(state_file, fs::file_time_type::clock::now());
        }
        f.push_back(run_once(floor_bin, payload, senvp.data()));
        r.push_back(run_once(remind, payload, senvp.data()));
      }
      const double mf = median(f), mr = median(r), noise = ratio_noise(r, f);
      const double target = rewritten ? 20 : 1.5;
      fmt::print("{:>22} {:>10.0f} {:>14.0f} {:>7.2f}x  (±{:.2f}, target <= {}x)\n",
                 rewritten ? "written before each" : "unchanged", mf, mr, mr / mf, noise, target);
      figure(rewritten ? "remind.client_state_5mb.rewritten" : "remind.client_state_5mb", mr / mf,
             noise, rewritten ? "<=20" : "<=1.5");
      if (mr > target * mf) ok = false;
    }
  }
  fmt::print("targets: {}\n", ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}
