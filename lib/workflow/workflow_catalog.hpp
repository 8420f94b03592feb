#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::workflow {

// One template file found on the search path.
struct CatalogEntry {
  std::string name;         // the file name without .yaml/.yml
  std::string description;  // the template's description ("" when it does not load)
  std::filesystem::path path;
  std::string error;  // the load error, "" when it loads
};

// Every template on `dirs` (lowest precedence first); a later directory's file hides an
// earlier one of the same name. Sorted by name. Missing directories are skipped.
std::vector<CatalogEntry> list_workflows(const std::vector<std::filesystem::path>& dirs);

// Resolves a workflow given by name or path: an existing file path (anything with a '/' or a
// .yaml/.yml ending that exists); else the highest-precedence file named <spec>.yaml/.yml;
// else a template whose `name` matches case-insensitively (as the reference implementation
// matches names). Error: "workflow '<spec>' not found (available: a, b)".
[[nodiscard]] Result<std::filesystem::path> resolve_workflow(
    const std::string& spec, const std::vector<std::filesystem::path>& dirs);

// Reads and validates a template file; errors carry the path and line:col.
[[nodiscard]] Result<WorkflowTemplate> load_workflow_file(const std::filesystem::path& path);

}  // namespace ctxkit::workflow
