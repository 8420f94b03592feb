#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::workflow {

enum class StepType { Action, Loop, Ralph };
// What must happen to the conversation before a step: nothing, /compact or /clear.
enum class ContextAction { None, Compact, Clear };

const char* to_string(StepType t);
const char* to_string(ContextAction a);  // "", "compact", "clear"

// A sub-step of a loop (one entry of `loops.<id>`).
struct LoopStep {
  std::string id;
  std::string agent;  // empty: the main agent
  std::string instructions;
  std::string on_fail;  // "", "retry", "skip", "abort"
  ContextAction context = ContextAction::None;
  // ctxkit extensions (ignored by the reference implementation).
  std::optional<std::string> compact_focus;
  std::optional<double> context_min_percent;
};

// A step of the main sequence.
struct WorkflowStep {
  std::string id;
  StepType type = StepType::Action;
  std::string agent;
  std::string instructions;
  long n = 1;                        // ralph iterations (`n || 1`)
  nlohmann::ordered_json artefacts;  // the raw `artefacts` value; discarded when absent
  ContextAction context = ContextAction::None;
  std::optional<std::string> compact_focus;
  std::optional<double> context_min_percent;
};

struct AgentConfig {
  std::string name;
  std::string description;
};

// A validated workflow template. `definition` is the document as parsed (unknown keys
// included), which the state file keeps as its `workflow_definition` snapshot.
struct WorkflowTemplate {
  std::string name;
  std::string description;
  std::vector<AgentConfig> agents;
  std::vector<std::pair<std::string, std::vector<LoopStep>>> loops;
  std::vector<WorkflowStep> steps;
  nlohmann::ordered_json definition;

  // The step with `id` (the first one), or nullptr.
  const WorkflowStep* find_step(std::string_view id) const;
  // The index of step `id`, or -1.
  int step_index(std::string_view id) const;
  // The sub-steps of loop `id`, or nullptr when the template has no such loop.
  const std::vector<LoopStep>* loop(std::string_view id) const;
};

// Parses and validates a template from YAML text, as the reference implementation does (same
// checks in the same order, same messages), plus: duplicate step ids, duplicate sub-step ids
// and the ctxkit extensions `compact_focus` (a string) and `context_min_percent` (a number from
// 0 to 100). A failure is one line "<source>:<line>:<col>: <message>" (the position of the
// offending node when known; without `source` the message alone).
[[nodiscard]] Result<WorkflowTemplate> parse_template(std::string_view yaml_text,
                                                      std::string_view source = {});

// Validates a template given as JSON (a state file's `workflow_definition`), with the same
// checks and messages as parse_template.
[[nodiscard]] Result<WorkflowTemplate> template_from_json(const nlohmann::ordered_json& definition);

}  // namespace ctxkit::workflow
