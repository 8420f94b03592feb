// ctx-report against its floor, on a generated 100 MB session (cached in $CTXKIT_BENCH_DIR,
// default /var/tmp/ctxkit-bench) with 3 compactions and 40 reminders in its transcript, in a line
// of work of 4 sessions (two trims before it and a rollover after it, recorded in the state
// database as ctx-trim and ctx-rollover record them), each measure the median of several runs:
//   page:   ctx-report --lineage -o FILE    vs  wc -l on the same file   (target: <= 1 s)
//           the page's size                                              (target: <= 2 MB)
// and every one of those 46 events must be on the page, the compactions with their figures.
//
//   bench_report BIN_DIR [RUNS] [SIZE_MB: 100]
#include <fmt/core.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "context/reminder.hpp"
#include "store/state_store.hpp"
#include "transcript_gen.hpp"

namespace {
namespace fs = std::filesystem;

double run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
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
  ::waitpid(pid, &status, 0);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "{} failed ({})\n", argv[0], status);
    std::exit(1);
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void figure(const std::string& name, double value, double noise, const std::string& target) {
  const char* path = std::getenv("CTXKIT_BENCH_FIGURES");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    fmt::print(f, "{}\t{:.4f}\t{:.4f}\t{}\n", name, value, noise, target);
    std::fclose(f);
  }
}

// The "timestamp" of a line, or empty.
std::string timestamp_of(const std::string& line) {
  auto at = line.find("\"timestamp\":\"");
  if (at == std::string::npos) return {};
  at += 13;
  auto end = line.find('"', at);
  return end == std::string::npos ? std::string() : line.substr(at, end - at);
}

std::string reminder_line(const std::string& session, const std::string& ts, int n) {
  ctxkit::context::ContextFigure f;
  f.window = 200'000;
  f.usable = f.denominator = 167'000;
  f.percent = 60 + n % 30;
  f.tokens = f.usable * f.percent / 100;
  f.point.threshold = true;
  f.point.tokens = 167'000;
  const auto tier = f.percent >= 85   ? ctxkit::context::Tier::Urgent
                    : f.percent >= 75 ? ctxkit::context::Tier::Recommend
                                      : ctxkit::context::Tier::Warn;
  nlohmann::ordered_json j = {{"parentUuid", "p"},
                              {"isSidechain", false},
                              {"attachment",
                               {{"type", "hook_additional_context"},
                                {"content", {ctxkit::context::reminder_text(tier, f, {}, false)}},
                                {"hookName", "PostToolUse:Bash"},
                                {"toolUseID", fmt::format("toolu_bench{:04}", n)},
                                {"hookEvent", "PostToolUse"}}},
                              {"type", "attachment"},
                              {"uuid", fmt::format("bench-reminder-{}", n)},
                              {"timestamp", ts},
                              {"sessionId", session}};
  return j.dump();
}

std::string compaction_line(const std::string& session, const std::string& ts, int64_t pre) {
  nlohmann::ordered_json j = {
      {"parentUuid", nullptr},
      {"isSidechain", false},
      {"type", "system"},
      {"subtype", "compact_boundary"},
      {"content", "Conversation compacted"},
      {"compactMetadata", {{"trigger", "auto"}, {"preTokens", pre}, {"postTokens", 9'000}}},
      {"uuid", fmt::format("bench-compaction-{}", pre)},
      {"timestamp", ts},
      {"sessionId", session}};
  return j.dump();
}

// The generated transcript with 40 reminders spread over it and two more compactions (at a
// quarter and at three quarters; the generator wrote one in the middle): returns the lines.
uint64_t add_events(const fs::path& from, const fs::path& to, const std::string& session,
                    std::vector<int64_t>& compactions) {
  const uint64_t size = fs::file_size(from);
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  std::string line, ts;
  uint64_t pos = 0, lines = 0;
  int reminders = 0, extra = 0;
  while (std::getline(in, line)) {
    if (auto t = timestamp_of(line); !t.empty()) ts = t;
    if (line.find("\"compact_boundary\"") != std::string::npos) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("compactMetadata"))
        compactions.push_back(j["compactMetadata"].value("preTokens", int64_t{0}));
    }
    out << line << '\n';
    pos += line.size() + 1;
    ++lines;
    if (ts.empty()) continue;
    while (reminders < 40 && pos * 41 >= size * static_cast<uint64_t>(reminders + 1)) {
      out << reminder_line(session, ts, reminders++) << '\n';
      ++lines;
    }
    while (extra < 2 && pos * 4 >= size * static_cast<uint64_t>(extra == 0 ? 1 : 3)) {
      const int64_t pre = 150'000 + 1'111 * (extra + 1);
      out << compaction_line(session, ts, pre) << '\n';
      compactions.push_back(pre);
      ++extra;
      ++lines;
    }
  }
  return lines;
}

std::string small_session(const std::string& id, const std::string& day) {
  std::string out;
  for (int i = 0; i < 5; ++i)
    out += fmt::format(
        R"({{"parentUuid":"p","isSidechain":false,"message":{{"id":"msg_{}_{}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":{},"output_tokens":3}}}},"type":"assistant","uuid":"u{}","timestamp":"{}T0{}:00:00.000Z","sessionId":"{}","version":"2.1.332"}})"
        "\n",
        id.substr(0, 4), i, 20'000 * (i + 1), i, day, i, id);
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_report BIN_DIR [RUNS] [SIZE_MB]\n");
    return 1;
  }
  const std::string report = std::string(argv[1]) + "/ctx-report";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const uint64_t mb = argc > 3 ? std::stoull(argv[3]) : 100;
  const char* d = std::getenv("CTXKIT_BENCH_DIR");
  const fs::path dir = d && *d ? d : "/var/tmp/ctxkit-bench";
  const fs::path home = dir / ("report-home-" + std::to_string(mb));
  fs::remove_all(home);
  const fs::path proj = home / ".claude/projects/-bench";
  fs::create_directories(proj);
  const fs::path src = dir / ("transcript-" + std::to_string(mb) + "mb.jsonl");
  auto info = ctxkit::bench::generate_transcript(src, mb << 20);
  const fs::path t = proj / (info.session_id + ".jsonl");
  std::vector<int64_t> compactions;
  add_events(src, t, info.session_id, compactions);

  // The line of work: A -trim-> B -trim-> the large session -rollover-> C.
  const std::string a = "aaaaaaaa-0000-4000-8000-000000000001",
                    b = "bbbbbbbb-0000-4000-8000-000000000002",
                    c = "cccccccc-0000-4000-8000-000000000003";
  std::ofstream(proj / (a + ".jsonl")) << small_session(a, "2026-11-19");
  std::ofstream(proj / (b + ".jsonl")) << small_session(b, "2026-11-20");
  std::ofstream(proj / (c + ".jsonl")) << small_session(c, "2026-11-22");
  const fs::path state = home / "state/ctxkit";
  {
    auto db = ctxkit::store::StateStore::open(state / "state.db", 1000);
    if (!db) {
      fmt::print(stderr, "{}\n", db.error().message);
      return 1;
    }
    auto rec = [&](const std::string& id) {
      ctxkit::store::SessionRecord r;
      r.session_id = id;
      r.project = "-bench";
      r.transcript = (proj / (id + ".jsonl")).string();
      return r;
    };
    if (!db->record_derivation(rec(a), rec(b), "trim", 71, 30'000, "2026-11-20T00:00:00.000Z") ||
        !db->record_derivation(rec(b), rec(info.session_id), "trim", 73, 25'000,
                               "2026-11-20T23:59:00.000Z") ||
        !db->record_derivation(rec(info.session_id), rec(c), "rollover", 88, std::nullopt,
                               "2026-11-21T23:59:00.000Z")) {
      fmt::print(stderr, "recording the line of work failed\n");
      return 1;
    }
  }
  const std::map<std::string, std::string> env = {{"HOME", home.string()},
                                                  {"PATH", "/usr/bin:/bin"},
                                                  {"XDG_STATE_HOME", (home / "state").string()}};
  const fs::path page = home / "page.html";
  std::vector<double> wc, rep;
  for (int i = 0; i < runs; ++i) {
    wc.push_back(run({"/usr/bin/wc", "-l", t.string()}, env));
    rep.push_back(
        run({report, "--session", info.session_id, "--lineage", "-o", page.string()}, env));
  }
  // Every event on the page, the compactions with their figures.
  const std::string json_path = (home / "page.json").string();
  run({report, "--session", info.session_id, "--lineage", "--json", "-o", json_path}, env);
  std::ifstream jin(json_path);
  auto j = nlohmann::json::parse(jin, nullptr, false);
  std::map<std::string, int> kinds;
  std::vector<int64_t> found;
  for (const auto& e : j["events"]) {
    kinds[e["kind"].get<std::string>()]++;
    if (e["kind"] == "compaction") found.push_back(e["tokens_before"].get<int64_t>());
  }
  std::sort(compactions.begin(), compactions.end());
  std::sort(found.begin(), found.end());
  std::string html;
  {
    std::ifstream hin(page);
    for (std::string line; std::getline(hin, line);) html += line + "\n";
  }
  size_t marks = 0;
  for (size_t at = html.find("<g class=\"ev ev-"); at != std::string::npos;
       at = html.find("<g class=\"ev ev-", at + 1))
    ++marks;
  const bool events_ok = kinds["compaction"] == 3 && kinds["trim"] == 2 && kinds["rollover"] == 1 &&
                         kinds["reminder"] == 40 && found == compactions &&
                         marks == j["events"].size();
  const double mw = median(wc), mr = median(rep);
  const double page_mb = static_cast<double>(fs::file_size(page)) / (1 << 20);
  fmt::print("{:>7} {:>8} {:>10} {:>8} {:>8} {:>10}\n", "size", "wc -l s", "report s", "x wc",
             "page MB", "events");
  fmt::print("{:>5}MB {:>8.3f} {:>10.3f} {:>7.1f}x {:>8.3f} {:>4} {}\n", mb, mw, mr, mr / mw,
             page_mb, marks, events_ok ? "all there" : "MISSING");
  fmt::print("events: compaction {} trim {} rollover {} reminder {} (of 3, 2, 1, 40)\n",
             kinds["compaction"], kinds["trim"], kinds["rollover"], kinds["reminder"]);
  const std::string at = fmt::format("report.{}mb.", mb);
  figure(at + "seconds", mr, 0, "<=1");
  figure(at + "page_mb", page_mb, 0, "<=2");
  const bool ok = mr <= 1.0 && page_mb <= 2.0 && events_ok;
  fmt::print("targets: {}\n", ok ? "met" : "MISSED");
  fs::remove_all(home);
  return ok ? 0 : 1;
}
