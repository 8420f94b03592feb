#include "workflow/workflow_catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "util/fs.hpp"
#include "util/text.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;

namespace {
bool is_template_file(const fs::path& p) {
  return p.extension() == ".yaml" || p.extension() == ".yml";
}

}  // namespace

Result<WorkflowTemplate> load_workflow_file(const fs::path& path) {
  // Never blocks on a FIFO; a template is small (4 MiB at most).
  auto text = util::read_file(path, {4u << 20});
  if (!text)
    return fail(
        fmt::format("{}: cannot read the workflow file ({})", path.string(), text.error().message),
        Error::Kind::NotFound);
  // One template that cannot be loaded (memory included) is an error of its own: it never takes
  // the others, or the program listing them, along.
  try {
    return parse_template(*text, path.string());
  } catch (const std::exception& e) {
    return fail(fmt::format("{}: cannot load the workflow file ({})", path.string(), e.what()),
                Error::Kind::Invalid);
  }
}

std::vector<CatalogEntry> list_workflows(const std::vector<fs::path>& dirs) {
  std::map<std::string, CatalogEntry> by_name;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (is_template_file(e.path()) && e.is_regular_file(ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      CatalogEntry entry;
      entry.name = f.stem().string();
      entry.path = f;
      auto t = load_workflow_file(f);
      if (t)
        entry.description = t->description;
      else
        entry.error = t.error().message;
      by_name[entry.name] = std::move(entry);
    }
  }
  std::vector<CatalogEntry> out;
  for (auto& [_, e] : by_name) out.push_back(std::move(e));
  return out;
}

Result<fs::path> resolve_workflow(const std::string& spec, const std::vector<fs::path>& dirs) {
  if (spec.empty()) return fail("no workflow given", Error::Kind::Invalid);
  std::error_code ec;
  const fs::path as_path(spec);
  if ((spec.find('/') != std::string::npos || is_template_file(as_path)) &&
      fs::is_regular_file(as_path, ec))
    return as_path;
  if (spec.find('/') != std::string::npos)
    return fail(fmt::format("{}: no such workflow file", spec), Error::Kind::NotFound);
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    for (const char* ext : {".yaml", ".yml"})
      if (fs::is_regular_file(*it / (spec + ext), ec)) return *it / (spec + ext);
  const auto entries = list_workflows(dirs);
  const std::string want = util::ascii_lower(spec);
  // Highest precedence first: list_workflows keeps the winner per file name; a `name` match
  // in a later directory wins over one in an earlier directory.
  for (auto dir = dirs.rbegin(); dir != dirs.rend(); ++dir)
    for (const auto& e : entries)
      if (e.path.parent_path() == *dir && e.error.empty()) {
        auto t = load_workflow_file(e.path);
        if (t && util::ascii_lower(t->name) == want) return e.path;
      }
  std::string names;
  for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
  return fail(
      fmt::format("workflow '{}' not found (available: {})", spec, names.empty() ? "none" : names),
      Error::Kind::NotFound);
}

}  // namespace ctxkit::workflow
