#include "context/compaction_point.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/fs.hpp"

namespace ctxkit::context {
namespace fs = std::filesystem;

namespace {
// The client's smallest auto-compact window, the part of the window it keeps for a reply, and the
// room it leaves for the summary below that.
constexpr int64_t kMinAutoCompactWindow = 100'000;
constexpr int64_t kReplyReserve = 20'000;
constexpr int64_t kSummaryBuffer = 13'000;

bool truthy(const std::optional<std::string>& v) {
  if (!v) return false;
  std::string s;
  for (char c : *v)
    if (!std::isspace(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// The top-level "autoCompactWindow" of a settings file: a number or a size string. Read with the
// shared reader: a FIFO or a device in the file's place is not waited on (a hook never hangs).
std::optional<int64_t> settings_window(const fs::path& file) {
  auto read = util::read_file(file);
  if (!read) return std::nullopt;
  const std::string& text = *read;
  if (text.find("autoCompactWindow") == std::string::npos)
    return std::nullopt;  // cannot miss the key
  bool too_deep = false;
  nlohmann::json::parser_callback_t limit = [&](int depth, nlohmann::json::parse_event_t,
                                                nlohmann::json&) {
    if (depth > 64) too_deep = true;
    return !too_deep;
  };
  const auto j = nlohmann::json::parse(text, limit, false);
  if (too_deep || !j.is_object()) return std::nullopt;
  const auto it = j.find("autoCompactWindow");
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    const auto v = it->get<int64_t>();
    return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  if (it->is_number_float()) return parse_window_size(it->dump());
  if (it->is_string()) return parse_window_size(it->get<std::string>());
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> parse_window_size(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  double scale = 1;
  const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(text.back())));
  if (last == 'k' || last == 'm') {
    scale = last == 'k' ? 1e3 : 1e6;
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::string digits(text);
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v)) return std::nullopt;
  const double tokens = std::round(v * scale);
  if (tokens < 1 || tokens > 1e15) return std::nullopt;
  return static_cast<int64_t>(tokens);
}

std::vector<fs::path> client_settings_files(const util::Env& env, const fs::path& project) {
  std::vector<fs::path> out;
  if (auto dir = env.get_nonempty("CLAUDE_CONFIG_DIR"))
    out.push_back(fs::path(*dir) / "settings.json");
  else if (auto home = env.get_nonempty("HOME"))
    out.push_back(fs::path(*home) / ".claude" / "settings.json");
  if (!project.empty()) {
    // The user's own file again when the project is the home folder: read once.
    fs::path shared = project / ".claude" / "settings.json";
    if (out.empty() || shared.lexically_normal() != out.front().lexically_normal())
      out.push_back(std::move(shared));
    out.push_back(project / ".claude" / "settings.local.json");
  }
  return out;
}

CompactionSettings read_compaction_settings(const util::Env& env,
                                            const std::vector<fs::path>& settings_files) {
  CompactionSettings s;
  for (const char* name : {"DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"}) {
    if (truthy(env.get(name))) {
      s.disabled = true;
      s.disabled_by = name;
      break;
    }
  }
  s.disable_1m = truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT"));
  if (auto pct = env.get_nonempty("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")) {
    char* end = nullptr;
    const double v = std::strtod(pct->c_str(), &end);
    if (end != pct->c_str() && std::isfinite(v) && v > 0 && v <= 100)
      s.pct_override = static_cast<int>(v);
  }
  if (auto w = env.get_nonempty("CLAUDE_CODE_AUTO_COMPACT_WINDOW"); w && parse_window_size(*w)) {
    s.auto_compact_window = parse_window_size(*w);
    s.window_origin = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
    return s;
  }
  for (const auto& file : settings_files) {
    if (auto w = settings_window(file)) {
      s.auto_compact_window = w;
      s.window_origin = file.string();
    }
  }
  return s;
}

CompactionPoint compaction_point(const CompactionSettings& settings, int64_t window) {
  CompactionPoint p;
  p.tokens = window;
  if (settings.disabled) {
    p.automatic = false;
    return p;
  }
  if (!settings.auto_compact_window) return p;
  const int64_t a = std::max(*settings.auto_compact_window, kMinAutoCompactWindow);
  const int64_t effective = std::min(a, window) - kReplyReserve;
  int64_t at = effective - kSummaryBuffer;
  if (settings.pct_override) at = std::min(at, effective * *settings.pct_override / 100);
  if (at <= 0 || at >= window) return p;
  p.threshold = true;
  p.tokens = at;
  return p;
}

}  // namespace ctxkit::context
