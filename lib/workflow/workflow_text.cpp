#include "workflow/workflow_text.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <string_view>

#include "util/one_line.hpp"

namespace ctxkit::workflow {
using ojson = nlohmann::ordered_json;

namespace {

std::string line_of(std::string_view text) {
  return util::one_line(text, SIZE_MAX);
}
std::string lines_of(std::string_view text) {
  std::string out;
  for (size_t pos = 0; pos <= text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (pos) out += '\n';
    out += util::one_line(text.substr(pos, nl - pos), SIZE_MAX);
    pos = nl + 1;
  }
  return out;
}

std::string status_text(const ojson& s) {
  std::string out;
  if (s.contains("contextAction") && s.value("message", "").starts_with("ctxkit's supervisor")) {
    out = lines_of(s["message"].get<std::string>());  // carried out at the turn's end
    out += '\n';
    return out;
  }
  if (s.contains("contextAction")) {
    out = line_of(fmt::format("Before this step: run {}{}{}", s["contextAction"].get<std::string>(),
                              s.contains("focus") ? " " : "",
                              s.contains("focus") ? s["focus"].get<std::string>() : ""));
    out += "\nThen run `ctx-workflow status` for the step's instructions.\n";
    return out;
  }
  const auto& p = s["progress"];
  std::string where = fmt::format("step {} ({} of {}, {})", s["step"].get<std::string>(),
                                  p["currentStep"].get<long>(), p["totalSteps"].get<long>(),
                                  s["stepType"].get<std::string>());
  if (s.contains("subStep"))
    where += fmt::format(", sub-step {} ({} of {})", s["subStep"].get<std::string>(),
                         s["subStepIndex"].get<long>() + 1, s["totalSubSteps"].get<long>());
  if (s.contains("task"))
    where += fmt::format(", task {}: {} ({} of {})", s["task"]["id"].get<std::string>(),
                         s["task"]["title"].get<std::string>(), s["task"]["index"].get<long>() + 1,
                         s["task"]["total"].get<long>());
  if (s.contains("ralphIteration"))
    where += fmt::format(", iteration {} of {}", s["ralphIteration"].get<long>(),
                         s["ralphTotal"].get<long>());
  out = line_of(fmt::format("Workflow {}: {}", s["status"].get<std::string>(), where));
  out += '\n';
  if (s["status"] == "running") {
    out += '\n';
    out += lines_of(s["instructions"].get<std::string>());
    out += '\n';
  }
  return out;
}

}  // namespace

std::string answer_text(const std::string& tool, const ojson& body, const std::string& loop_id) {
  std::string out;
  if (tool == "workflow_list") {
    for (const auto& w : body["workflows"])
      out += fmt::format(
          "{:<20} {}\n    {}\n", line_of(w["name"].get<std::string>()),
          line_of(w["description"].get<std::string>() +
                  (w.contains("error") ? " (does not load: " + w["error"].get<std::string>() + ")"
                                       : std::string())),
          line_of(w["path"].get<std::string>()));
    if (body["workflows"].empty()) out += "no workflow templates found\n";
  } else if (tool == "workflow_set_tasks") {
    out += line_of(fmt::format("{} tasks set for {}", body["tasksSet"].get<long>(), loop_id));
    out += '\n';
  } else if (tool == "workflow_context") {
    for (auto it = body.begin(); it != body.end(); ++it)
      out += fmt::format("{}:\n{}\n\n", line_of(it.key()), lines_of(it.value().get<std::string>()));
  } else {
    out += status_text(body);
  }
  return out;
}

std::string action_fate(const std::vector<RecordedEvent>& events, const std::string& step) {
  // The step's last hand-out (or skip), then what followed it: confirmations, execution.
  size_t last = events.size();
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].event.step == step &&
        (events[i].event.kind == "handed_out" || events[i].event.kind == "skipped" ||
         last == events.size()))
      last = i;
  if (last == events.size()) return {};
  auto phrase = [](const RecordedEvent& e) {
    std::string kind = e.event.kind;
    for (auto& c : kind)
      if (c == '_') c = ' ';
    return fmt::format("{} at {} by {}", kind, e.at, e.event.by);
  };
  const auto& ev = events[last];
  std::string line = fmt::format("Context action ({}): {}", ev.event.action, phrase(ev));
  for (size_t i = last + 1; i < events.size(); ++i) {
    const auto& next = events[i];
    if (next.event.action != ev.event.action) continue;
    if (next.event.kind == "executed" ||
        (next.event.kind == "confirmed" && next.event.step == ev.event.step))
      line += "; " + phrase(next);
  }
  return line_of(line);
}

}  // namespace ctxkit::workflow
