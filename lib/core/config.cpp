#include "core/config.hpp"

#include <cmath>
#include <cstdlib>

#include "core/project_folder.hpp"
#include "core/status_format.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <fmt/core.h>
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>

namespace ctxkit::core {
namespace fs = std::filesystem;

namespace {

// One known key: how to read it from TOML and from the environment, and how to show it.
struct KeyDef {
  std::string section;
  std::string name;
  std::string type;  // for messages: "integer", "boolean", "string", "array of strings"
  std::function<std::optional<std::string>(Config&, const toml::node&)> from_toml;
  std::function<std::optional<std::string>(Config&, std::string_view)> from_env;
  std::function<std::string(const Config&)> show;
  bool user_only = false;  // chooses where private data goes or what runs: not from a project file
  bool soft = false;  // a value it refuses is a warning (the previous value stays), not an error
  bool project_path =
      false;  // a file read from the project: from a project file, only a path inside it
  std::string full() const { return section + "." + name; }
};

std::optional<std::string> check_range(int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) return fmt::format("must be between {} and {}, got {}", lo, hi, v);
  return std::nullopt;
}

KeyDef make_int(std::string section, std::string name, int64_t lo, int64_t hi,
                std::function<int64_t(const Config&)> get,
                std::function<void(Config&, int64_t)> set) {
  KeyDef k;
  k.section = std::move(section);
  k.name = std::move(name);
  k.type = "integer";
  k.from_toml = [lo, hi, set](Config& c, const toml::node& n) -> std::optional<std::string> {
    auto v = n.value_exact<int64_t>();
    if (!v) return std::string("expected an integer");
    if (auto e = check_range(*v, lo, hi)) return e;
    set(c, *v);
    return std::nullopt;
  };
  k.from_env = [lo, hi, set](Config& c, std::string_view s) -> std::optional<std::string> {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      return fmt::format("expected an integer, got '{}'", s);
    if (auto e = check_range(v, lo, hi)) return e;
    set(c, v);
    return std::nullopt;
  };
  k.show = [get](const Config& c) { return fmt::format("{}", get(c)); };
  return k;
}

// A non-negative number (an integer is taken as one): a cost.
KeyDef make_number(std::string section, std::string name, double hi,
                   std::function<double(const Config&)> get,
                   std::function<void(Config&, double)> set) {
  KeyDef k;
  k.section = std::move(section);
  k.name = std::move(name);
  k.type = "number";
  auto check = [hi](double v) -> std::optional<std::string> {
    if (!std::isfinite(v) || v < 0 || v > hi)
      return fmt::format("must be a number between 0 and {}, got {}", hi, v);
    return std::nullopt;
  };
  k.from_toml = [check, set](Config& c, const toml::node& n) -> std::optional<std::string> {
    std::optional<double> v;
    if (auto d = n.value_exact<double>())
      v = *d;
    else if (auto i = n.value_exact<int64_t>())
      v = static_cast<double>(*i);
    if (!v) return std::string("expected a number");
    if (auto e = check(*v)) return e;
    set(c, *v);
    return std::nullopt;
  };
  k.from_env = [check, set](Config& c, std::string_view s) -> std::optional<std::string> {
    const std::string text(s);
    char* end = nullptr;
    const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() ||
        text.find_first_of("xXnNiI") != std::string::npos)
      return fmt::format("expected a number, got '{}'", s);
    if (auto e = check(v)) return e;
    set(c, v);
    return std::nullopt;
  };
  k.show = [get](const Config& c) { return fmt::format("{}", get(c)); };
  return k;
}

KeyDef make_bool(std::string section, std::string name, std::function<bool(const Config&)> get,
                 std::function<void(Config&, bool)> set) {
  KeyDef k;
  k.section = std::move(section);
  k.name = std::move(name);
  k.type = "boolean";
  k.from_toml = [set](Config& c, const toml::node& n) -> std::optional<std::string> {
    auto v = n.value_exact<bool>();
    if (!v) return std::string("expected true or false");
    set(c, *v);
    return std::nullopt;
  };
  k.from_env = [set](Config& c, std::string_view s) -> std::optional<std::string> {
    if (s == "1" || s == "true" || s == "yes" || s == "on")
      set(c, true);
    else if (s == "0" || s == "false" || s == "no" || s == "off")
      set(c, false);
    else
      return fmt::format("expected true or false, got '{}'", s);
    return std::nullopt;
  };
  k.show = [get](const Config& c) { return get(c) ? std::string("true") : std::string("false"); };
  return k;
}

KeyDef make_string(std::string section, std::string name, std::vector<std::string> allowed,
                   std::function<std::string(const Config&)> get,
                   std::function<void(Config&, const std::string&)> set) {
  KeyDef k;
  k.section = std::move(section);
  k.name = std::move(name);
  k.type = "string";
  auto check = [allowed](const std::string& v) -> std::optional<std::string> {
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end())
      return std::nullopt;
    return fmt::format("must be one of {}, got '{}'", fmt::join(allowed, ", "), v);
  };
  k.from_toml = [set, check](Config& c, const toml::node& n) -> std::optional<std::string> {
    auto v = n.value_exact<std::string>();
    if (!v) return std::string("expected a string");
    if (auto e = check(*v)) return e;
    set(c, *v);
    return std::nullopt;
  };
  k.from_env = [set, check](Config& c, std::string_view s) -> std::optional<std::string> {
    std::string v(s);
    if (auto e = check(v)) return e;
    set(c, v);
    return std::nullopt;
  };
  k.show = [get](const Config& c) { return fmt::format("\"{}\"", get(c)); };
  return k;
}

KeyDef make_string_list(std::string section, std::string name,
                        std::function<std::vector<std::string>(const Config&)> get,
                        std::function<void(Config&, std::vector<std::string>)> set) {
  KeyDef k;
  k.section = std::move(section);
  k.name = std::move(name);
  k.type = "array of strings";
  k.from_toml = [set](Config& c, const toml::node& n) -> std::optional<std::string> {
    const auto* arr = n.as_array();
    if (!arr) return std::string("expected an array of strings");
    std::vector<std::string> out;
    for (const auto& el : *arr) {
      auto v = el.value_exact<std::string>();
      if (!v || v->empty()) return std::string("expected an array of non-empty strings");
      out.push_back(*v);
    }
    set(c, std::move(out));
    return std::nullopt;
  };
  k.from_env = [set](Config& c, std::string_view s) -> std::optional<std::string> {
    set(c, util::split_list(s));
    return std::nullopt;
  };
  k.show = [get](const Config& c) {
    std::vector<std::string> q;
    for (const auto& s : get(c)) q.push_back(fmt::format("\"{}\"", s));
    return fmt::format("[{}]", fmt::join(q, ", "));
  };
  return k;
}

const std::vector<KeyDef>& known_keys() {
  static const std::vector<KeyDef> keys = [] {
    std::vector<KeyDef> k;
    auto ctx_int = [&](const char* name, int64_t lo, int64_t hi, int ContextConfig::*m) {
      k.push_back(make_int(
          "context", name, lo, hi,
          [m](const Config& c) { return static_cast<int64_t>(c.context.*m); },
          [m](Config& c, int64_t v) { c.context.*m = static_cast<int>(v); }));
    };
    ctx_int("warn_threshold", 1, 100, &ContextConfig::warn_threshold);
    ctx_int("recommend_threshold", 1, 100, &ContextConfig::recommend_threshold);
    ctx_int("urgent_threshold", 1, 100, &ContextConfig::urgent_threshold);
    ctx_int("check_interval_seconds", 0, 86400, &ContextConfig::check_interval_seconds);
    ctx_int("trim_threshold_chars", 1, 100000000, &ContextConfig::trim_threshold_chars);
    k.push_back(make_string_list(
        "context", "trim_target_tools", [](const Config& c) { return c.context.trim_target_tools; },
        [](Config& c, std::vector<std::string> v) { c.context.trim_target_tools = std::move(v); }));
    k.push_back(make_int(
        "context", "window_tokens", 0, 100000000,
        [](const Config& c) { return c.context.window_tokens; },
        [](Config& c, int64_t v) { c.context.window_tokens = v; }));
    k.push_back(make_int(
        "context", "reserved_tokens", 0, 10000000,
        [](const Config& c) { return c.context.reserved_tokens; },
        [](Config& c, int64_t v) { c.context.reserved_tokens = v; }));
    k.push_back(make_string(
        "context", "basis", {"usable", "window"},
        [](const Config& c) {
          return std::string(c.context.basis == Basis::Usable ? "usable" : "window");
        },
        [](Config& c, const std::string& v) {
          c.context.basis = v == "window" ? Basis::Window : Basis::Usable;
        }));
    ctx_int("transcript_wait_ms", 0, 10000, &ContextConfig::transcript_wait_ms);
    k.push_back(make_bool(
        "context", "system_message", [](const Config& c) { return c.context.system_message; },
        [](Config& c, bool v) { c.context.system_message = v; }));
    k.push_back(make_string(
        "state", "dir", {}, [](const Config& c) { return c.state.dir; },
        [](Config& c, const std::string& v) { c.state.dir = v; }));
    k.back().user_only = true;
    k.push_back(make_int(
        "state", "busy_timeout_ms", 0, 60000,
        [](const Config& c) { return static_cast<int64_t>(c.state.busy_timeout_ms); },
        [](Config& c, int64_t v) { c.state.busy_timeout_ms = static_cast<int>(v); }));
    k.push_back(make_string_list(
        "archive", "exclude_projects", [](const Config& c) { return c.archive.exclude_projects; },
        [](Config& c, std::vector<std::string> v) { c.archive.exclude_projects = std::move(v); }));
    k.push_back(make_string(
        "archive", "exclude_marker", {}, [](const Config& c) { return c.archive.exclude_marker; },
        [](Config& c, const std::string& v) { c.archive.exclude_marker = v; }));
    k.push_back(make_bool(
        "archive", "episodic_memory_sync",
        [](const Config& c) { return c.archive.episodic_memory_sync; },
        [](Config& c, bool v) { c.archive.episodic_memory_sync = v; }));
    k.push_back(make_string(
        "rollover", "claude_bin", {}, [](const Config& c) { return c.rollover.claude_bin; },
        [](Config& c, const std::string& v) { c.rollover.claude_bin = v; }));
    k.back().user_only = true;
    k.push_back(make_string_list(
        "rollover", "claude_args", [](const Config& c) { return c.rollover.claude_args; },
        [](Config& c, std::vector<std::string> v) { c.rollover.claude_args = std::move(v); }));
    k.push_back(make_bool(
        "rollover", "print", [](const Config& c) { return c.rollover.print; },
        [](Config& c, bool v) { c.rollover.print = v; }));
    k.push_back(make_int(
        "rollover", "grace_seconds", 0, 600,
        [](const Config& c) { return static_cast<int64_t>(c.rollover.grace_seconds); },
        [](Config& c, int64_t v) { c.rollover.grace_seconds = static_cast<int>(v); }));
    k.push_back(make_string(
        "runner", "mode", {"continuous", "fresh-per-task", "fresh-per-iteration", "hybrid", "auto"},
        [](const Config& c) { return c.runner.mode; },
        [](Config& c, const std::string& v) { c.runner.mode = v; }));
    auto run_int = [&](const char* name, int64_t lo, int64_t hi, int RunnerConfig::*m) {
      k.push_back(make_int(
          "runner", name, lo, hi,
          [m](const Config& c) { return static_cast<int64_t>(c.runner.*m); },
          [m](Config& c, int64_t v) { c.runner.*m = static_cast<int>(v); }));
    };
    run_int("max_iterations", 1, 1000000, &RunnerConfig::max_iterations);
    run_int("max_task_iterations", 1, 10000, &RunnerConfig::max_task_iterations);
    k.push_back(make_string(
        "runner", "on_fail", {"retry", "skip", "abort"},
        [](const Config& c) { return c.runner.on_fail; },
        [](Config& c, const std::string& v) { c.runner.on_fail = v; }));
    k.push_back(make_string_list(
        "runner", "anchor_files", [](const Config& c) { return c.runner.anchor_files; },
        [](Config& c, std::vector<std::string> v) { c.runner.anchor_files = std::move(v); }));
    k.back().project_path = true;
    k.push_back(make_string(
        "runner", "progress_file", {}, [](const Config& c) { return c.runner.progress_file; },
        [](Config& c, const std::string& v) { c.runner.progress_file = v; }));
    k.back().project_path = true;
    run_int("progress_lines", 0, 1000, &RunnerConfig::progress_lines);
    run_int("summary_max_lines", 1, 10000, &RunnerConfig::summary_max_lines);
    run_int("anchor_max_tokens", 100, 100000, &RunnerConfig::anchor_max_tokens);
    run_int("exit_grace_seconds", 0, 3600, &RunnerConfig::exit_grace_seconds);
    run_int("call_timeout_seconds", 0, 604800, &RunnerConfig::call_timeout_seconds);
    k.push_back(make_int(
        "runner", "max_tokens", 0, 1'000'000'000'000'000,
        [](const Config& c) { return c.runner.max_tokens; },
        [](Config& c, int64_t v) { c.runner.max_tokens = v; }));
    k.push_back(make_number(
        "runner", "max_cost_usd", 1e9, [](const Config& c) { return c.runner.max_cost_usd; },
        [](Config& c, double v) { c.runner.max_cost_usd = v; }));
    run_int("fresh_at", 1, 100, &RunnerConfig::fresh_at);
    run_int("compact_at", 1, 100, &RunnerConfig::compact_at);
    k.push_back(make_string(
        "runner", "on_limit", {"wait", "stop"}, [](const Config& c) { return c.runner.on_limit; },
        [](Config& c, const std::string& v) { c.runner.on_limit = v; }));
    run_int("limit_backoff_seconds", 1, 86400, &RunnerConfig::limit_backoff_seconds);
    run_int("limit_max_wait_seconds", 1, 604800, &RunnerConfig::limit_max_wait_seconds);
    k.push_back(make_string_list(
        "runner", "claude_args", [](const Config& c) { return c.runner.claude_args; },
        [](Config& c, std::vector<std::string> v) { c.runner.claude_args = std::move(v); }));
    k.back().user_only = true;
    k.push_back(make_bool(
        "cap", "enabled", [](const Config& c) { return c.cap.enabled; },
        [](Config& c, bool v) { c.cap.enabled = v; }));
    k.back().user_only = true;
    auto cap_int = [&](const char* name, int64_t lo, int64_t CapConfig::*m) {
      k.push_back(make_int(
          "cap", name, lo, 1'000'000'000'000, [m](const Config& c) { return c.cap.*m; },
          [m](Config& c, int64_t v) { c.cap.*m = v; }));
      k.back().user_only = true;
    };
    cap_int("threshold_chars", 1, &CapConfig::threshold_chars);
    cap_int("bash_chars", 0, &CapConfig::bash_chars);
    cap_int("mcp_chars", 0, &CapConfig::mcp_chars);
    k.push_back(make_string_list(
        "cap", "skip_tools", [](const Config& c) { return c.cap.skip_tools; },
        [](Config& c, std::vector<std::string> v) { c.cap.skip_tools = std::move(v); }));
    k.back().user_only = true;
    cap_int("head_chars", 0, &CapConfig::head_chars);
    cap_int("tail_chars", 0, &CapConfig::tail_chars);
    k.push_back(make_string(
        "status", "command", {}, [](const Config& c) { return c.status.command; },
        [](Config& c, const std::string& v) { c.status.command = v; }));
    k.back().user_only = true;
    k.push_back(make_int(
        "status", "timeout_ms", 10, 60000,
        [](const Config& c) { return static_cast<int64_t>(c.status.timeout_ms); },
        [](Config& c, int64_t v) { c.status.timeout_ms = static_cast<int>(v); }));
    k.push_back(make_string(
        "status", "format", {}, [](const Config& c) { return c.status.format; },
        [](Config& c, const std::string& v) { c.status.format = v; }));
    {
      // A format is checked against the known fields; a bad one leaves the built-in line.
      auto check = [](const std::string& v) -> std::optional<std::string> {
        if (auto parsed = parse_status_format(v); !parsed)
          return parsed.error().message + "; the default line is kept";
        return std::nullopt;
      };
      KeyDef& f = k.back();
      f.soft = true;
      f.from_toml = [check](Config& c, const toml::node& n) -> std::optional<std::string> {
        auto v = n.value_exact<std::string>();
        if (!v) return std::string("expected a string");
        if (auto e = check(*v)) return e;
        c.status.format = *v;
        return std::nullopt;
      };
      f.from_env = [check](Config& c, std::string_view s) -> std::optional<std::string> {
        std::string v(s);
        if (auto e = check(v)) return e;
        c.status.format = v;
        return std::nullopt;
      };
    }
    // [compact]: when a compaction is started (user file only: it decides what runs).
    k.push_back(make_int(
        "compact", "at", 0, 100, [](const Config& c) { return static_cast<int64_t>(c.compact.at); },
        [](Config& c, int64_t v) { c.compact.at = static_cast<int>(v); }));
    k.back().user_only = true;
    k.push_back(make_string(
        "compact", "action", {"compact", "rollover"},
        [](const Config& c) { return c.compact.action; },
        [](Config& c, const std::string& v) { c.compact.action = v; }));
    k.back().user_only = true;
    return k;
  }();
  return keys;
}

std::string upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
  return s;
}

// The sections ctxkit owns; keys of other sections belong to other tools sharing .work.toml.
bool owned_section(std::string_view s) {
  return s == "context" || s == "state" || s == "archive" || s == "rollover" || s == "runner" ||
         s == "status" || s == "cap" || s == "compact";
}

// Where the first non-ASCII byte outside a string or a comment is ("line L, column C" in bytes),
// if any. TOML allows none there, and toml++ 3.3 reaches __builtin_unreachable (undefined
// behaviour) on some of them (e.g. "[conéxt]"), so such a document is refused before it.
std::optional<std::string> non_ascii_outside_strings(std::string_view text) {
  size_t line = 1, column = 1;
  auto step = [&](char c) {
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') step(text[i++]);
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t quote = text.substr(i, 3) == std::string(3, c) ? 3 : 1;
      size_t end = i + quote;
      while (end < text.size() && text.compare(end, quote, text.substr(i, quote)) != 0) {
        if (quote == 1 && text[end] == '\n') break;  // unterminated: toml++ reports it
        end += c == '"' && text[end] == '\\' ? size_t{2} : size_t{1};
      }
      end = std::min(text.size(), end + quote);
      while (i < end) step(text[i++]);
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x80) return fmt::format("{}:{}", line, column);
    step(text[i++]);
  }
  return std::nullopt;
}

std::string location(const std::string& origin, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", origin, r.begin.line, r.begin.column);
}

// The first path of a string (or array of strings) value that is absolute or leaves the folder it
// is relative to ("../x", "a/../../x"); nullopt when there is none.
std::optional<std::string> path_outside_project(const toml::node& node) {
  auto outside = [](const std::string& s) {
    const fs::path p = fs::path(s).lexically_normal();
    return p.is_absolute() || p.has_root_name() || p.has_root_directory() ||
           (!p.empty() && *p.begin() == "..");
  };
  if (auto v = node.value_exact<std::string>())
    return outside(*v) ? std::optional(*v) : std::nullopt;
  if (const auto* arr = node.as_array())
    for (const auto& el : *arr)
      if (auto v = el.value_exact<std::string>(); v && outside(*v)) return *v;
  return std::nullopt;
}

void apply_table(Config& config, const toml::table& root, const std::string& origin,
                 ConfigLayer layer) {
  for (const auto& [sect_key, sect_node] : root) {
    std::string sect(sect_key.str());
    if (!owned_section(sect)) continue;
    const auto* table = sect_node.as_table();
    if (!table) {
      config.errors.push_back(
          fmt::format("{}: [{}] must be a table", location(origin, sect_node.source()), sect));
      continue;
    }
    for (const auto& [key, node] : *table) {
      std::string name(key.str());
      auto def = std::find_if(known_keys().begin(), known_keys().end(),
                              [&](const KeyDef& d) { return d.section == sect && d.name == name; });
      if (def == known_keys().end()) {
        config.warnings.push_back(fmt::format("{}: unknown key '{}.{}' (ignored)",
                                              location(origin, key.source()), sect, name));
        continue;
      }
      if (def->user_only && layer == ConfigLayer::Project) {
        config.warnings.push_back(
            fmt::format("{}: '{}.{}' is ignored in a project file (set it in the user's "
                        "config.toml or as CTXKIT_{}_{})",
                        location(origin, key.source()), sect, name, upper(sect), upper(name)));
        continue;
      }
      if (def->project_path && layer == ConfigLayer::Project) {
        if (auto outside = path_outside_project(node)) {
          config.warnings.push_back(fmt::format(
              "{}: '{}.{}' names '{}', outside the project: ignored in a project file (a path "
              "elsewhere is taken only from "
              "the user's config.toml or CTXKIT_{}_{})",
              location(origin, node.source()), sect, name, *outside, upper(sect), upper(name)));
          continue;
        }
      }
      if (auto err = def->from_toml(config, node)) {
        if (def->soft) {
          config.warnings.push_back(
              fmt::format("{}: {}.{}: {}", location(origin, node.source()), sect, name, *err));
          continue;
        }
        config.errors.push_back(
            fmt::format("{}: {}.{}: {}", location(origin, node.source()), sect, name, *err));
        config.refused.emplace(def->full(), config.errors.back());
        continue;
      }
      config.origins[def->full()] = origin;
    }
  }
}

void validate_thresholds(Config& config, const Config& before) {
  auto& c = config.context;
  if (c.warn_threshold < c.recommend_threshold && c.recommend_threshold < c.urgent_threshold)
    return;
  config.errors.push_back(fmt::format(
      "context thresholds must increase (warn {} < recommend {} < urgent {}); keeping {}/{}/{}",
      c.warn_threshold, c.recommend_threshold, c.urgent_threshold, before.context.warn_threshold,
      before.context.recommend_threshold, before.context.urgent_threshold));
  for (const char* k :
       {"context.warn_threshold", "context.recommend_threshold", "context.urgent_threshold"})
    config.origins[k] = before.origin(k);
  c.warn_threshold = before.context.warn_threshold;
  c.recommend_threshold = before.context.recommend_threshold;
  c.urgent_threshold = before.context.urgent_threshold;
}

// A file skipped whole: one error line, and the file among those whose keys are not known.
void ignore_file(Config& config, std::string line) {
  config.unread_files.push_back(line);
  config.errors.push_back(std::move(line));
}

void apply_file(Config& config, const fs::path& path, ConfigLayer layer) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return;
  Config before = config;
  config.files.push_back(path);
  // Read with the shared reader: never blocks on a FIFO swapped in after the check, size capped.
  auto text = util::read_file(path, {1 << 20});
  if (!text) {
    ignore_file(config, fmt::format("{} (file ignored)", text.error().message));
    return;
  }
  if (auto at = non_ascii_outside_strings(*text)) {
    ignore_file(
        config,
        fmt::format("{}:{}: a non-ASCII character outside a string or comment (file ignored)",
                    path.string(), *at));
    return;
  }
  try {
    toml::table t = toml::parse(*text, path.string());
    apply_table(config, t, path.string(), layer);
  } catch (const toml::parse_error& e) {
    ignore_file(config, fmt::format("{}: {} (file ignored)", location(path.string(), e.source()),
                                    e.description()));
    return;
  } catch (const std::exception& e) {
    ignore_file(config, fmt::format("{}: {} (file ignored)", path.string(), e.what()));
    return;
  }
  validate_thresholds(config, before);
}

}  // namespace

Locations Config::locations(const util::Env& env) const {
  return Locations::resolve(env, state.dir);
}

std::string Config::origin(const std::string& key) const {
  auto it = origins.find(key);
  return it == origins.end() ? std::string("default") : it->second;
}

bool Config::set_by_user(const std::string& key) const {
  auto it = origins.find(key);
  return it != origins.end() && it->second != "default" &&
         (project_file.empty() || it->second != project_file.string());
}

fs::path project_start_dir(const util::Env& env, const std::string& cwd) {
  if (auto p = env.get_nonempty("CLAUDE_PROJECT_DIR")) return *p;
  if (!cwd.empty()) return cwd;
  std::error_code ec;
  auto here = fs::current_path(ec);
  return ec ? fs::path("/") : here;
}

void apply_toml_text(Config& config, std::string_view text, const std::string& origin,
                     ConfigLayer layer) {
  Config before = config;
  if (auto at = non_ascii_outside_strings(text)) {
    ignore_file(
        config,
        fmt::format("{}:{}: a non-ASCII character outside a string or comment (file ignored)",
                    origin, *at));
    return;
  }
  try {
    toml::table t = toml::parse(text, origin);
    apply_table(config, t, origin, layer);
  } catch (const toml::parse_error& e) {
    ignore_file(config, fmt::format("{}: {} (file ignored)", location(origin, e.source()),
                                    e.description()));
    return;
  }
  validate_thresholds(config, before);
}

Result<std::optional<std::string>> toml_string_value(std::string_view text, std::string_view table,
                                                     std::string_view key) {
  if (auto at = non_ascii_outside_strings(text)) {
    auto colon = at->find(':');
    return fail(fmt::format("line {}, column {}: a non-ASCII character outside a string or comment",
                            at->substr(0, colon), at->substr(colon + 1)),
                Error::Kind::Invalid);
  }
  try {
    toml::table root = toml::parse(text);
    const auto* t = root.get_as<toml::table>(table);
    if (!t) return std::optional<std::string>();
    const auto* v = t->get_as<std::string>(key);
    if (!v) return std::optional<std::string>();
    return std::optional<std::string>(v->get());
  } catch (const toml::parse_error& e) {
    return fail(fmt::format("line {}, column {}: {}", e.source().begin.line,
                            e.source().begin.column, e.description()),
                Error::Kind::Invalid);
  }
}

Config load_config(const util::Env& env, const ConfigSources& sources) {
  // The key table is built only when a file or variable sets a key: most hook runs read none.
  Config config;
  // The user's file is where `state.dir` may be set: only the environment decides where it is.
  apply_file(config, Locations::resolve(env).config_file(), ConfigLayer::User);
  if (sources.project_start) {
    std::error_code ec;
    fs::path dir = fs::absolute(*sources.project_start, ec);
    if (ec) dir = *sources.project_start;
    for (int depth = 0; depth < 64; ++depth) {
      fs::path candidate = dir / ".work.toml";
      if (fs::is_regular_file(candidate, ec)) {
        config.project_file = candidate;
        apply_file(config, candidate, ConfigLayer::Project);
        break;
      }
      if (!dir.has_parent_path() || dir.parent_path() == dir) break;
      dir = dir.parent_path();
    }
  }
  // Most runs set no CTXKIT_ variable: then there is nothing to look up.
  const auto& vars = env.vars();
  const auto first = vars.lower_bound(std::string_view("CTXKIT_"));
  if (first == vars.end() || !first->first.starts_with("CTXKIT_")) return config;
  Config before = config;
  bool any_env = false;
  for (const auto& k : known_keys()) {
    std::string var = fmt::format("CTXKIT_{}_{}", upper(k.section), upper(k.name));
    auto v = env.get(var);
    if (!v) continue;
    any_env = true;
    if (auto err = k.from_env(config, *v)) {
      if (k.soft) {
        config.warnings.push_back(fmt::format("{}: {}", var, *err));
        continue;
      }
      config.errors.push_back(fmt::format("{}: {}", var, *err));
      config.refused.emplace(k.full(), config.errors.back());
      continue;
    }
    config.origins[k.full()] = var;
  }
  if (any_env) validate_thresholds(config, before);
  return config;
}

std::optional<int64_t> CapConfig::threshold_for(std::string_view tool) const {
  if (!enabled) return std::nullopt;
  for (const auto& skip : skip_tools) {
    if (skip == tool) return std::nullopt;
    if (skip.ends_with('*') && tool.starts_with(std::string_view(skip).substr(0, skip.size() - 1)))
      return std::nullopt;
  }
  if (tool == "Bash" && bash_chars > 0) return bash_chars;
  if (tool.starts_with("mcp__") && mcp_chars > 0) return mcp_chars;
  return threshold_chars;
}

bool ArchiveConfig::excludes(const std::string& project) const {
  for (const auto& p : exclude_projects) {
    if (p.empty()) continue;
    if (p == project) return true;
    const std::string name = project_folder_name(p);
    if (name == project) return true;
    // A long path's folder name ends in a hash of the path; when the folder of that name is
    // missing, the client takes the one that begins with the same kProjectFolderMax characters
    // and '-' (written with another hash): so is it excluded.
    if (p.find('/') != std::string::npos && name.size() > kProjectFolderMax &&
        project.size() > kProjectFolderMax + 1 &&
        project.compare(0, kProjectFolderMax + 1, name, 0, kProjectFolderMax + 1) == 0)
      return true;
    if (p.find('/') == std::string::npos && !p.starts_with('-')) {
      // "-<name>" ends the project's folder name (compared in two parts: GCC 12 at -O3 reports
      // a false overflow in `"-" + std::string`).
      if (project.size() > name.size() && project.ends_with(name) &&
          project[project.size() - name.size() - 1] == '-')
        return true;
    }
  }
  return false;
}

std::string show_config(const Config& config, const util::Env* env) {
  std::string out;
  size_t width = 0;
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& k : known_keys()) {
    rows.emplace_back(fmt::format("{} = {}", k.full(), k.show(config)), config.origin(k.full()));
    width = std::max(width, rows.back().first.size());
  }
  for (const auto& [line, origin] : rows) out += fmt::format("{:<{}}  # {}\n", line, width, origin);
  if (env && !config.archive.exclude_projects.empty()) {
    const Locations loc = config.locations(*env);
    std::set<std::string> matched;
    for (const auto& dir : {loc.claude_projects_dir(), loc.archive_dir()}) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        std::error_code e2;
        if (e.is_directory(e2) && !name.starts_with('.') && config.archive.excludes(name))
          matched.insert(name);
      }
    }
    std::string list;
    for (const auto& m : matched) list += (list.empty() ? "" : ", ") + m;
    out += matched.empty() ? "archive.exclude_projects matches no project yet\n"
                           : fmt::format("archive.exclude_projects matches: {}\n", list);
  }
  for (const auto& w : config.warnings) out += fmt::format("warning: {}\n", w);
  for (const auto& e : config.errors) out += fmt::format("error: {}\n", e);
  return out;
}

}  // namespace ctxkit::core
