#include "workflow/workflow_template.hpp"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <set>

#include "workflow/yaml_budget.hpp"

namespace ctxkit::workflow {
namespace {
using ojson = nlohmann::ordered_json;

struct Mark {
  int line = 0;
  int column = 0;
};

// A mapping with the same key twice (the reference's parser rejects it).
struct DuplicateKey {
  YAML::Mark mark;
};
using Marks = std::map<std::string, Mark>;

std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

bool is_digit(char c, int base) {
  if (c >= '0' && c <= '9') return c - '0' < base;
  if (base == 16) return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  return false;
}

// Counts the digits of `base` from `i`; leaves `i` after them.
size_t digits(const std::string& s, size_t& i, int base) {
  const size_t from = i;
  while (i < s.size() && is_digit(s[i], base)) ++i;
  return i - from;
}

// [-+]?[0-9]+
bool is_int(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  return digits(s, i, 10) > 0 && i == s.size();
}

// 0o[0-7]+ and 0x[0-9a-fA-F]+
bool is_prefixed(const std::string& s, char marker, int base) {
  if (s.size() < 3 || s[0] != '0' || s[1] != marker) return false;
  size_t i = 2;
  return digits(s, i, base) > 0 && i == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits(s, i, 10) == 0) return false;
  } else {
    if (digits(s, i, 10) == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits(s, i, 10);
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits(s, i, 10) == 0) return false;
  }
  return i == s.size();
}

ojson resolve_plain(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  auto number = [](double d) -> ojson {
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0)
      return static_cast<int64_t>(d);
    return d;
  };
  if (is_int(s)) return number(std::strtod(s.c_str(), nullptr));
  if (is_prefixed(s, 'o', 8))
    return number(static_cast<double>(std::strtoull(s.c_str() + 2, nullptr, 8)));
  if (is_prefixed(s, 'x', 16))
    return number(static_cast<double>(std::strtoull(s.c_str() + 2, nullptr, 16)));
  if (is_float(s)) return number(std::strtod(s.c_str(), nullptr));
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF")
    return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return s;
}

// What a template may expand to (yaml_budget.hpp): templates are a few hundred nodes; the
// location paths kept for each node count as text.
constexpr YamlLimits kYamlLimits{100'000, 64, 16u << 20};

ojson to_json(const YAML::Node& node, const std::string& path, Marks& marks, YamlBudget& budget) {
  YamlBudget::Scope scope(budget, node, path.size() + (node.IsScalar() ? node.Scalar().size() : 0));
  const auto m = node.Mark();
  if (!m.is_null()) marks[path] = Mark{m.line + 1, m.column + 1};
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string& text = node.Scalar();
      if (tag == "?") return resolve_plain(text);
      if (tag == "tag:yaml.org,2002:str" || tag == "!") return text;
      if (tag == "tag:yaml.org,2002:null") return nullptr;
      return resolve_plain(text);
    }
    case YAML::NodeType::Sequence: {
      ojson arr = ojson::array();
      size_t i = 0;
      for (const auto& child : node) {
        arr.push_back(to_json(child, path + "/" + std::to_string(i), marks, budget));
        ++i;
      }
      return arr;
    }
    case YAML::NodeType::Map: {
      ojson obj = ojson::object();
      for (const auto& kv : node) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
        if (obj.contains(key)) throw DuplicateKey{kv.first.Mark()};
        obj[key] = to_json(kv.second, path + "/" + escape_pointer(key), marks, budget);
        const auto km = kv.first.Mark();
        if (!km.is_null() && !marks.count(path + "/" + escape_pointer(key)))
          marks[path + "/" + escape_pointer(key)] = Mark{km.line + 1, km.column + 1};
      }
      return obj;
    }
  }
  return nullptr;
}

bool is_number(const ojson& v) {
  return v.is_number();
}

class Validator {
 public:
  Validator(const Marks* marks, std::string_view source) : marks_(marks), source_(source) {}

  Result<WorkflowTemplate> run(const ojson& doc) {
    WorkflowTemplate t;
    if (!doc.is_object()) return err("", "Template must be an object");
    if (!str(doc, "name")) return err("/name", "Template must have a 'name' string");
    if (!str(doc, "description"))
      return err("/description", "Template must have a 'description' string");
    t.name = doc["name"].get<std::string>();
    t.description = doc["description"].get<std::string>();

    if (doc.contains("agents")) {
      const auto& agents = doc["agents"];
      if (!agents.is_object()) return err("/agents", "'agents' must be an object if provided");
      for (auto it = agents.begin(); it != agents.end(); ++it) {
        const std::string& key = it.key();
        const auto& a = it.value();
        const std::string p = "/agents/" + escape_pointer(key);
        if (!a.is_object()) return err(p, fmt::format("Agent '{}' must be an object", key));
        if (!str(a, "description"))
          return err(p + "/description",
                     fmt::format("Agent '{}' must have a 'description' string", key));
        for (const char* list : {"tools", "cannot"}) {
          if (!a.contains(list)) continue;
          const auto& v = a[list];
          const bool tools = std::string_view(list) == "tools";
          if (!v.is_array())
            return err(p + "/" + list,
                       fmt::format("Agent '{}' {} must be an array if provided", key, list));
          for (size_t i = 0; i < v.size(); ++i)
            if (!v[i].is_string())
              return err(p + "/" + list + "/" + std::to_string(i),
                         tools
                             ? fmt::format("Agent '{}' tools must be strings", key)
                             : fmt::format("Agent '{}' cannot restrictions must be strings", key));
        }
        t.agents.push_back({key, a["description"].get<std::string>()});
      }
    }

    if (doc.contains("loops")) {
      const auto& loops = doc["loops"];
      if (!loops.is_object()) return err("/loops", "'loops' must be an object if provided");
      for (auto it = loops.begin(); it != loops.end(); ++it) {
        const std::string& loop_id = it.key();
        const std::string lp = "/loops/" + escape_pointer(loop_id);
        if (!it.value().is_array())
          return err(lp, fmt::format("Loop '{}' must be an array of steps", loop_id));
        std::vector<LoopStep> subs;
        std::set<std::string> seen;
        for (size_t i = 0; i < it.value().size(); ++i) {
          auto s = loop_step(loop_id, i, it.value()[i], lp + "/" + std::to_string(i));
          if (!s) return std::unexpected(s.error());
          if (!seen.insert(s->id).second)
            return err(
                lp + "/" + std::to_string(i) + "/id",
                fmt::format("Loop '{}' step '{}' is defined more than once", loop_id, s->id));
          subs.push_back(std::move(*s));
        }
        t.loops.emplace_back(loop_id, std::move(subs));
      }
    }

    if (!doc.contains("steps") || !doc["steps"].is_array())
      return err("/steps", "Template must have a 'steps' array");
    const auto& steps = doc["steps"];
    if (steps.empty()) return err("/steps", "Template must have at least one step");
    std::set<std::string> seen;
    for (size_t i = 0; i < steps.size(); ++i) {
      auto s = step(i, steps[i], "/steps/" + std::to_string(i));
      if (!s) return std::unexpected(s.error());
      if (!seen.insert(s->id).second)
        return err("/steps/" + std::to_string(i) + "/id",
                   fmt::format("Step '{}' is defined more than once", s->id));
      t.steps.push_back(std::move(*s));
    }

    // Cross-references: agents, then loops.
    std::set<std::string> agent_ids;
    for (const auto& a : t.agents) agent_ids.insert(a.name);
    for (size_t i = 0; i < t.steps.size(); ++i) {
      const auto& s = t.steps[i];
      if (!s.agent.empty() && !agent_ids.count(s.agent))
        return err("/steps/" + std::to_string(i) + "/agent",
                   fmt::format("Step '{}' references unknown agent '{}'", s.id, s.agent));
    }
    for (const auto& [loop_id, subs] : t.loops)
      for (size_t i = 0; i < subs.size(); ++i)
        if (!subs[i].agent.empty() && !agent_ids.count(subs[i].agent))
          return err("/loops/" + escape_pointer(loop_id) + "/" + std::to_string(i) + "/agent",
                     fmt::format("Loop '{}' step '{}' references unknown agent '{}'", loop_id,
                                 subs[i].id, subs[i].agent));
    for (size_t i = 0; i < t.steps.size(); ++i)
      if (t.steps[i].type == StepType::Loop && !t.loop(t.steps[i].id))
        return err("/steps/" + std::to_string(i),
                   fmt::format("Loop step '{}' references unknown loop definition", t.steps[i].id));

    t.definition = doc;
    return t;
  }

 private:
  static bool str(const ojson& obj, const char* key) {
    return obj.contains(key) && obj[key].is_string();
  }

  std::unexpected<Error> err(const std::string& path, const std::string& message) const {
    if (marks_) {
      std::string p = path;
      while (true) {
        auto it = marks_->find(p);
        if (it != marks_->end())
          return fail(fmt::format("{}{}{}:{}: {}", source_, source_.empty() ? "" : ":",
                                  it->second.line, it->second.column, message),
                      Error::Kind::Invalid);
        if (p.empty()) break;
        p = p.substr(0, p.rfind('/'));
      }
    }
    return fail(source_.empty() ? message : fmt::format("{}: {}", source_, message),
                Error::Kind::Invalid);
  }

  // The `context` field and the ctxkit extensions, shared by steps and sub-steps. `who` is
  // "Step 'x'" or "Loop step 'x'".
  std::optional<std::unexpected<Error>> context_fields(const ojson& v, const std::string& path,
                                                       const std::string& who,
                                                       ContextAction& action,
                                                       std::optional<std::string>& focus,
                                                       std::optional<double>& min_percent) const {
    if (v.contains("context")) {
      const auto& c = v["context"];
      if (!c.is_string())
        return err(path + "/context", fmt::format("{} context must be a string", who));
      const auto s = c.get<std::string>();
      if (s != "compact" && s != "clear")
        return err(path + "/context",
                   fmt::format("{} context must be either 'compact' or 'clear', got: {}", who, s));
      action = s == "compact" ? ContextAction::Compact : ContextAction::Clear;
    }
    if (v.contains("compact_focus")) {
      if (!v["compact_focus"].is_string())
        return err(path + "/compact_focus", fmt::format("{} compact_focus must be a string", who));
      focus = v["compact_focus"].get<std::string>();
    }
    if (v.contains("context_min_percent")) {
      const auto& m = v["context_min_percent"];
      if (!is_number(m) || m.get<double>() < 0 || m.get<double>() > 100 ||
          std::isnan(m.get<double>()))
        return err(path + "/context_min_percent",
                   fmt::format("{} context_min_percent must be a number from 0 to 100", who));
      min_percent = m.get<double>();
    }
    return std::nullopt;
  }

  Result<LoopStep> loop_step(const std::string& loop_id, size_t index, const ojson& v,
                             const std::string& path) const {
    if (!v.is_object())
      return err(path, fmt::format("Loop '{}' step {} must be an object", loop_id, index));
    if (!str(v, "id"))
      return err(path + "/id",
                 fmt::format("Loop '{}' step {} must have an 'id' string", loop_id, index));
    LoopStep s;
    s.id = v["id"].get<std::string>();
    if (!str(v, "instructions"))
      return err(
          path + "/instructions",
          fmt::format("Loop '{}' step '{}' must have an 'instructions' string", loop_id, s.id));
    s.instructions = v["instructions"].get<std::string>();
    if (v.contains("agent")) {
      if (!v["agent"].is_string())
        return err(
            path + "/agent",
            fmt::format("Loop '{}' step '{}' agent must be a string if provided", loop_id, s.id));
      s.agent = v["agent"].get<std::string>();
    }
    if (v.contains("on_fail")) {
      const auto& f = v["on_fail"];
      if (!f.is_string() || (f != "retry" && f != "skip" && f != "abort"))
        return err(path + "/on_fail",
                   fmt::format("Loop '{}' step '{}' on_fail must be one of: retry, skip, abort",
                               loop_id, s.id));
      s.on_fail = f.get<std::string>();
    }
    if (auto e = context_fields(v, path, fmt::format("Loop step '{}'", s.id), s.context,
                                s.compact_focus, s.context_min_percent))
      return *e;
    return s;
  }

  Result<WorkflowStep> step(size_t index, const ojson& v, const std::string& path) const {
    if (!v.is_object()) return err(path, fmt::format("Step {} must be an object", index));
    if (!str(v, "id"))
      return err(path + "/id", fmt::format("Step {} must have an 'id' string", index));
    WorkflowStep s;
    s.id = v["id"].get<std::string>();
    const std::string type = str(v, "type") ? v["type"].get<std::string>() : std::string();
    if (type == "action")
      s.type = StepType::Action;
    else if (type == "loop")
      s.type = StepType::Loop;
    else if (type == "ralph")
      s.type = StepType::Ralph;
    else
      return err(path + "/type",
                 fmt::format("Step '{}' must have a 'type' of 'action', 'loop', or 'ralph'", s.id));
    if (v.contains("agent")) {
      if (!v["agent"].is_string())
        return err(path + "/agent",
                   fmt::format("Step '{}' agent must be a string if provided", s.id));
      s.agent = v["agent"].get<std::string>();
    }
    if (s.type == StepType::Action && !str(v, "instructions"))
      return err(path + "/instructions",
                 fmt::format("Action step '{}' must have an 'instructions' string", s.id));
    if (s.type == StepType::Ralph) {
      if (!str(v, "instructions"))
        return err(path + "/instructions",
                   fmt::format("Ralph step '{}' must have an 'instructions' string", s.id));
      const bool ok = v.contains("n") && v["n"].is_number() && v["n"].get<double>() >= 1 &&
                      v["n"].get<double>() == std::floor(v["n"].get<double>()) &&
                      std::isfinite(v["n"].get<double>());
      if (!ok)
        return err(
            path + (v.contains("n") ? "/n" : ""),
            fmt::format("Ralph step '{}' must have an 'n' field with a positive integer value",
                        s.id));
    }
    if (str(v, "instructions")) s.instructions = v["instructions"].get<std::string>();
    if (v.contains("n") && v["n"].is_number()) {
      const double n = v["n"].get<double>();
      s.n = (n != 0 && std::isfinite(n)) ? static_cast<long>(n) : 1;
    }
    s.artefacts = v.contains("artefacts") ? v["artefacts"] : ojson(ojson::value_t::discarded);
    if (auto e = context_fields(v, path, fmt::format("Step '{}'", s.id), s.context, s.compact_focus,
                                s.context_min_percent))
      return *e;
    return s;
  }

  const Marks* marks_;
  std::string source_;
};
}  // namespace

const char* to_string(StepType t) {
  switch (t) {
    case StepType::Action:
      return "action";
    case StepType::Loop:
      return "loop";
    case StepType::Ralph:
      return "ralph";
  }
  return "action";
}

const char* to_string(ContextAction a) {
  switch (a) {
    case ContextAction::Compact:
      return "compact";
    case ContextAction::Clear:
      return "clear";
    case ContextAction::None:
      break;
  }
  return "";
}

const WorkflowStep* WorkflowTemplate::find_step(std::string_view id) const {
  for (const auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

int WorkflowTemplate::step_index(std::string_view id) const {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].id == id) return static_cast<int>(i);
  return -1;
}

const std::vector<LoopStep>* WorkflowTemplate::loop(std::string_view id) const {
  for (const auto& [loop_id, subs] : loops)
    if (loop_id == id) return &subs;
  return nullptr;
}

Result<WorkflowTemplate> parse_template(std::string_view yaml_text, std::string_view source) {
  Marks marks;
  ojson doc;
  auto located = [&](int line, int col, const std::string& msg) {
    if (source.empty()) return fmt::format("{}:{}: {}", line, col, msg);
    return fmt::format("{}:{}:{}: {}", source, line, col, msg);
  };
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml_text));
    if (docs.size() > 1) {
      const auto m = docs[1].Mark();
      return fail(located(m.line + 1, m.column + 1,
                          "Invalid YAML syntax: Source contains multiple documents"),
                  Error::Kind::Invalid);
    }
    if (!docs.empty()) {
      YamlBudget budget(kYamlLimits);
      doc = to_json(docs[0], "", marks, budget);
    } else {
      doc = nullptr;
    }
  } catch (const YamlTooLarge& e) {
    return fail(located(e.mark.line + 1, e.mark.column + 1, "Invalid YAML: " + e.what),
                Error::Kind::Invalid);
  } catch (const YAML::Exception& e) {
    return fail(located(e.mark.line + 1, e.mark.column + 1, "Invalid YAML syntax: " + e.msg),
                Error::Kind::Invalid);
  } catch (const DuplicateKey& d) {
    return fail(
        located(d.mark.line + 1, d.mark.column + 1, "Invalid YAML syntax: Map keys must be unique"),
        Error::Kind::Invalid);
  }
  return Validator(&marks, source).run(doc);
}

Result<WorkflowTemplate> template_from_json(const nlohmann::ordered_json& definition) {
  return Validator(nullptr, "workflow_definition").run(definition);
}

}  // namespace ctxkit::workflow
