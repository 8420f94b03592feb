#include "runner/report.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "runner/run_record.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"

namespace ctxkit::runner {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
uint64_t u64(const ojson& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>()
         : it != j.end() && it->is_number_integer() && it->get<int64_t>() > 0
             ? static_cast<uint64_t>(it->get<int64_t>())
             : 0;
}

ojson usage_of(const ojson& u) {
  ojson out = {{"input", u64(u, "input")},
               {"cache_creation", u64(u, "cache_creation")},
               {"cache_read", u64(u, "cache_read")},
               {"output", u64(u, "output")}};
  out["total"] = out["input"].get<uint64_t>() + out["cache_creation"].get<uint64_t>() +
                 out["cache_read"].get<uint64_t>() + out["output"].get<uint64_t>();
  return out;
}

double share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string k(uint64_t n) {
  return std::to_string(n);
}
}  // namespace

Result<ojson> run_report(const fs::path& folder) {
  auto rec = RunRecord::read_json(folder);
  if (!rec) return std::unexpected(rec.error());
  const ojson& st = *rec;
  // "running" (or "paused") in run.json with no ctx-run holding the run: it was killed or the
  // machine went down.
  const std::string status = st.value("status", "");
  const bool interrupted =
      (status == "running" || status == "paused") && !RunRecord::in_use(folder);
  ojson rep = {{"run_id", st["run_id"]},
               {"mode", st["mode"]},
               {"status", interrupted ? ojson("interrupted") : st["status"]},
               {"folder", folder.string()},
               {"source", st["source"]}};
  ojson tasks = ojson::array();
  uint64_t iterations = 0, resets = 0, compactions = 0, anchoring = 0;
  ojson total = {
      {"input", 0}, {"cache_creation", 0}, {"cache_read", 0}, {"output", 0}, {"total", 0}};
  int64_t wall = 0;
  double cost = 0;
  auto cost_of = [](const ojson& j) {
    return j.is_object() && j.contains("cost_usd") && j["cost_usd"].is_number()
               ? j["cost_usd"].get<double>()
               : 0.0;
  };
  for (const auto& t : st["tasks"]) {
    ojson u = usage_of(t.value("usage", ojson::object()));
    ojson row = {{"id", t["id"]},
                 {"title", t.value("title", "")},
                 {"status", t["status"]},
                 {"iterations", u64(t, "iterations")},
                 {"resets", u64(t, "resets")},
                 {"compactions", u64(t, "compactions")},
                 {"usage", u},
                 {"anchoring_tokens", u64(t, "anchoring_tokens")},
                 {"anchoring_share", share(u64(t, "anchoring_tokens"), u["total"].get<uint64_t>())},
                 {"wall_ms", t.value("wall_ms", int64_t{0})},
                 {"context_mode", t.contains("context_mode") && t["context_mode"].is_string()
                                      ? t["context_mode"]
                                      : st["mode"]},
                 {"cost_usd", cost_of(t)}};
    cost += cost_of(t);
    iterations += row["iterations"].get<uint64_t>();
    resets += row["resets"].get<uint64_t>();
    compactions += row["compactions"].get<uint64_t>();
    anchoring += row["anchoring_tokens"].get<uint64_t>();
    for (const char* key : {"input", "cache_creation", "cache_read", "output", "total"})
      total[key] = total[key].get<uint64_t>() + u[key].get<uint64_t>();
    wall += row["wall_ms"].get<int64_t>();
    tasks.push_back(row);
  }
  // The runner's own time per iteration and the client's, from the iteration events.
  std::vector<double> runner_ms, client_ms;
  uint64_t peak_context =
      0;  // the largest context after a call (the iteration events' context_tokens)
  // Per call (the iteration events) and the decisions about the session between calls.
  ojson calls = ojson::array(), decisions = ojson::array();
  constexpr size_t kMaxListed = 10'000;
  if (auto text = util::read_file(folder / "events.jsonl", {256ull << 20, false})) {
    size_t pos = 0;
    while (pos < text->size()) {
      size_t nl = text->find('\n', pos);
      std::string_view line(text->data() + pos,
                            (nl == std::string::npos ? text->size() : nl) - pos);
      pos = nl == std::string::npos ? text->size() : nl + 1;
      // The decisions about the session between calls, and the calls themselves, found by the
      // name the runner writes ("event":"<name>") before a line is parsed.
      static constexpr std::string_view kDecisions[] = {"auto_decision",   "compact_at",
                                                        "compacted",       "compact_failed",
                                                        "compact_skipped", "context_reset"};
      std::string_view named;
      if (const size_t at = line.find("\"event\":\""); at != std::string_view::npos) {
        named = line.substr(at + 9);
        named = named.substr(0, named.find('"'));
      }
      const bool decision =
          std::find(std::begin(kDecisions), std::end(kDecisions), named) != std::end(kDecisions);
      if (named != "iteration" && !decision) continue;
      if (line.size() > (1u << 20) || util::json_depth(line, 16) > 16) continue;
      ojson ev = util::parse_ordered_json(line);
      if (!ev.is_object() || !ev.contains("event") || !ev["event"].is_string()) continue;
      const std::string name = ev["event"].get<std::string>();
      if (name != named) continue;
      if (decision) {
        if (decisions.size() < kMaxListed) {
          // The calls made before it (the log's order): it was decided before the next one.
          ojson d = {{"event", name}, {"before_call", calls.size() + 1}};
          for (const char* key : {"at", "task_id", "decision", "why", "percent", "threshold",
                                  "reason", "session_id", "action"})
            if (ev.contains(key) && !ev[key].is_structured()) d[key] = ev[key];
          decisions.push_back(d);
        }
        continue;
      }
      if (calls.size() < kMaxListed) {
        ojson c = {{"n", calls.size() + 1}};
        for (const char* key : {"at", "task_id", "iteration", "session_id", "fresh", "exit_code",
                                "report", "cost_usd", "context_tokens", "client_ms"})
          if (ev.contains(key) && !ev[key].is_structured()) c[key] = ev[key];
        c["usage"] = usage_of(ev.value("usage", ojson::object()));
        calls.push_back(c);
      }
      if (ev.contains("runner_ms") && ev["runner_ms"].is_number())
        runner_ms.push_back(ev["runner_ms"].get<double>());
      if (ev.contains("client_ms") && ev["client_ms"].is_number())
        client_ms.push_back(ev["client_ms"].get<double>());
      if (ev.contains("context_tokens") && ev["context_tokens"].is_number_unsigned())
        peak_context = std::max(peak_context, ev["context_tokens"].get<uint64_t>());
    }
  }
  const int64_t started = st.value("started_at_ms", int64_t{0});
  const int64_t ended = st["ended_at_ms"].is_number() ? st["ended_at_ms"].get<int64_t>() : started;
  rep["tasks"] = tasks;
  rep["calls"] = calls;
  rep["decisions"] = decisions;
  rep["totals"] = {{"tasks", tasks.size()},
                   {"done", std::count_if(tasks.begin(), tasks.end(),
                                          [](const ojson& t) { return t["status"] == "done"; })},
                   {"iterations", iterations},
                   {"resets", resets},
                   {"compactions", compactions},
                   {"usage", total},
                   {"anchoring_tokens", anchoring},
                   {"anchoring_share", share(anchoring, total["total"].get<uint64_t>())},
                   {"anchoring_measure",
                    "estimate: anchor UTF-8 bytes / 4, once per session started or re-anchored"},
                   {"wall_ms", ended - started},
                   {"task_wall_ms", wall},
                   {"runner_ms_median", median(runner_ms)},
                   {"client_ms_median", median(client_ms)},
                   {"cost_usd", cost},
                   {"peak_context", peak_context}};
  if (st.contains("stopped_on") && st["stopped_on"].is_object())
    rep["stopped_on"] = st["stopped_on"];
  return rep;
}

void print_reports(const std::vector<ojson>& reports, std::ostream& out) {
  for (const auto& r : reports) {
    const auto& t = r["totals"];
    out << fmt::format("run {}  mode {}  status {}  {} of {} tasks done  wall {:.1f} s\n",
                       r["run_id"].get<std::string>(), r["mode"].get<std::string>(),
                       r["status"].get<std::string>(), t["done"].get<int64_t>(),
                       t["tasks"].get<size_t>(),
                       static_cast<double>(t["wall_ms"].get<int64_t>()) / 1000.0);
    out << fmt::format(
        "{:<24} {:<8} {:>5} {:>6} {:>8} {:>9} {:>10} {:>11} {:>8} {:>10} {:>8} {:>6} {:>8}\n",
        "task", "status", "iter", "resets", "compacts", "input", "cache_cr", "cache_read", "output",
        "total", "anchor", "share", "wall_s");
    auto row = [&](const std::string& id, const std::string& status, uint64_t it, uint64_t rs,
                   uint64_t cp, const ojson& u, uint64_t an, double sh, int64_t wall) {
      out << fmt::format(
          "{:<24} {:<8} {:>5} {:>6} {:>8} {:>9} {:>10} {:>11} {:>8} {:>10} {:>8} {:>5.1f}% "
          "{:>8.1f}\n",
          id.size() > 24 ? id.substr(0, 23) + "~" : id, status, it, rs, cp, k(u["input"]),
          k(u["cache_creation"]), k(u["cache_read"]), k(u["output"]), k(u["total"]), an, sh * 100,
          static_cast<double>(wall) / 1000.0);
    };
    for (const auto& x : r["tasks"])
      row(x["id"], x["status"], x["iterations"], x["resets"], x["compactions"], x["usage"],
          x["anchoring_tokens"], x["anchoring_share"], x["wall_ms"]);
    row("total", "", t["iterations"], t["resets"], t["compactions"], t["usage"],
        t["anchoring_tokens"], t["anchoring_share"], t["task_wall_ms"]);
    out << fmt::format(
        "runner time per iteration (all but the client): median {:.1f} ms; client: median {:.0f} "
        "ms\n",
        t["runner_ms_median"].get<double>(), t["client_ms_median"].get<double>());
    for (const auto& x : r["tasks"])
      if (x["context_mode"] != r["mode"])
        out << fmt::format("task {} ran in context mode {}\n", x["id"].get<std::string>(),
                           x["context_mode"].is_string() ? x["context_mode"].get<std::string>()
                                                         : util::dump_json(x["context_mode"]));
    out << fmt::format("cost ${:.4f}; the largest context after a call {}\n",
                       t["cost_usd"].get<double>(), k(t["peak_context"]));
    if (r.contains("stopped_on")) {
      const ojson& b = r["stopped_on"];
      auto text_of = [&](const char* key) {
        return b.contains(key) && b[key].is_string() ? b[key].get<std::string>() : std::string("?");
      };
      const bool is_cost = text_of("budget") == "cost";
      auto amount = [&](const char* key) {
        const double v = b.contains(key) && b[key].is_number() ? b[key].get<double>() : 0.0;
        return is_cost ? fmt::format("${:.4f}", v) : fmt::format("{:.0f} tokens", v);
      };
      out << fmt::format(
          "stopped on {} {} budget: {} spent of {}, over by {}\n",
          text_of("scope") == "task" ? fmt::format("task {}'s", text_of("task_id")) : "the run's",
          is_cost ? "cost" : "token", amount("spent"), amount("limit"), amount("over"));
    }
    out << "anchor tokens are an estimate (anchor bytes / 4); tokens are the client's reported "
           "usage\n\n";
  }
  if (reports.size() < 2) return;
  out << "side by side:\n";
  out << fmt::format("{:<22}", "");
  for (const auto& r : reports) out << fmt::format(" {:>20}", r["mode"].get<std::string>());
  out << '\n';
  auto line = [&](const std::string& label, auto get) {
    out << fmt::format("{:<22}", label);
    for (const auto& r : reports) out << fmt::format(" {:>20}", get(r["totals"]));
    out << '\n';
  };
  line("run", [&](const ojson&) { return std::string(); });
  line("tasks done", [](const ojson& t) {
    return fmt::format("{}/{}", t["done"].get<int64_t>(), t["tasks"].get<size_t>());
  });
  line("iterations", [](const ojson& t) { return k(t["iterations"]); });
  line("context resets", [](const ojson& t) { return k(t["resets"]); });
  line("compactions", [](const ojson& t) { return k(t["compactions"]); });
  for (const char* key : {"input", "cache_creation", "cache_read", "output", "total"})
    line(std::string("tokens ") + key, [key](const ojson& t) { return k(t["usage"][key]); });
  line("anchoring tokens (est.)", [](const ojson& t) { return k(t["anchoring_tokens"]); });
  line("anchoring share", [](const ojson& t) {
    return fmt::format("{:.1f}%", t["anchoring_share"].get<double>() * 100);
  });
  line("wall s", [](const ojson& t) {
    return fmt::format("{:.1f}", static_cast<double>(t["wall_ms"].get<int64_t>()) / 1000.0);
  });
}

std::vector<fs::path> list_runs(const fs::path& project) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(project / ".ctxkit" / "runs", ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ctxkit::runner
