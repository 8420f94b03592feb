#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::workflow {

class WorkflowMachine;

// The re-anchor: the bounded block a fresh (or just compacted or cleared) session is given so
// that it knows where it stands. The runner's anchor (`ctx-run`), the SessionStart hook
// (`ctx-gate --hook`) and a supervised action's next prompt are assembled here.

// One part of the block: a heading line and its text.
struct AnchorSection {
  std::string heading;
  std::string body;
};

// Cuts `text` to at most `max` bytes on a UTF-8 boundary, saying how much was cut.
std::string bounded_text(std::string_view text, size_t max);

// head, then every section ("<heading>\n<body>\n"), then tail, in at most `max_bytes`: when it
// does not fit, the room left after head and tail is shared max-min fairly (a section shorter
// than its share keeps all of it, the rest is split among the longer ones, each cut with a note
// of how much was left out). The same input gives the same bytes.
std::string assemble_anchor(std::string_view head, const std::vector<AnchorSection>& sections,
                            std::string_view tail, size_t max_bytes);

// The workflow part: position (step k of n, sub-step, task, iteration), the request summary,
// the step's instructions and the latest handoff.
std::vector<AnchorSection> workflow_sections(const WorkflowMachine& machine);

// The SessionStart re-anchor for `worktree`'s running workflow after a `clear` or `compact`,
// bounded to `max_tokens` (4 bytes a token); empty when no workflow is running there or its
// state does not load.
std::string workflow_reanchor(const std::filesystem::path& worktree, std::string_view source,
                              int max_tokens);

}  // namespace ctxkit::workflow
