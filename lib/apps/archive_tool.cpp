#include "apps/archive_tool.hpp"

#include <fmt/core.h>

#include <filesystem>

#include "util/fs.hpp"
#include "util/paths.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
bool names_server(const fs::path& file) {
  auto text = util::read_file(file, {64ull << 20});
  return text && text->find(fmt::format("\"{}\"", kArchiveServer)) != std::string::npos;
}
}  // namespace

std::string archive_search_tool(const util::Env& env, const std::string& cwd) {
  if (auto root = env.get_nonempty("CLAUDE_PLUGIN_ROOT")) {
    if (names_server(fs::path(*root) / ".mcp.json"))
      return fmt::format("mcp__plugin_ctxkit_{}__archive_search", kArchiveServer);
  }
  const std::string tool = fmt::format("mcp__{}__archive_search", kArchiveServer);
  fs::path user = env.get_nonempty("CLAUDE_CONFIG_DIR")
                      ? fs::path(*env.get_nonempty("CLAUDE_CONFIG_DIR")) / ".claude.json"
                      : util::home_dir(env) / ".claude.json";
  if (names_server(user)) return tool;
  if (auto project = env.get_nonempty("CLAUDE_PROJECT_DIR");
      project && names_server(fs::path(*project) / ".mcp.json"))
    return tool;
  if (!cwd.empty() && names_server(fs::path(cwd) / ".mcp.json")) return tool;
  return {};
}

std::string searchable_after_compaction(const std::string& tool, const std::string& session_id) {
  if (!tool.empty())
    return fmt::format(
        "The conversation before this compaction is archived and searchable: when you need a "
        "detail the summary lacks (an "
        "exact error, path, command output or decision), call {} with the words you remember "
        "(session \"{}\" for this "
        "conversation only), open a hit with archive_show and cite it as SESSION:LINE.",
        tool, session_id);
  return fmt::format(
      "The conversation before this compaction is archived and searchable: when you need a detail "
      "the summary lacks, run "
      "ctx-search \"words you remember\" --session {} (Bash), then ctx-search --show SESSION:LINE, "
      "and cite SESSION:LINE.",
      session_id);
}

std::string searchable_after_clear(const std::string& tool) {
  return fmt::format(
      "Earlier sessions, the one before this /clear included, are archived and searchable: when "
      "the work needs a detail "
      "from them, call {} with the words you remember, open a hit with archive_show and cite it as "
      "SESSION:LINE.",
      tool);
}

std::string continuation_retrieval(const std::string& tool, const std::string& parent_session_id) {
  if (tool.empty()) return {};
  return fmt::format(
      "The full previous session is archived and searchable with your {} tool. For anything not in "
      "the summary above, "
      "search it with the words you need (add session \"{}\" to search the previous session only). "
      "Each hit is cited "
      "SESSION:LINE; archive_show opens it in full (the original text of anything that was "
      "trimmed).\n\n"
      "Example queries: a decision about a topic, an error message, a file name such as "
      "engine.c:42.",
      tool, parent_session_id);
}

}  // namespace ctxkit::apps
