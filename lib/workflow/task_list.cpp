#include "workflow/task_list.hpp"

#include <fmt/core.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/text.hpp"
#include "workflow/yaml_budget.hpp"

namespace ctxkit::workflow {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// Nesting deeper than this is refused in JSON (a tasks file needs 4 levels). yaml-cpp refuses
// documents nested deeper than 2000 levels itself (YAML::DeepRecursion, a ParserException).
constexpr int kMaxJsonDepth = 64;

struct Mark {
  int line = 0;
  int column = 0;
};
// Finds where the node at a path ("/tasks/0/title") is, when the format can say.
using Locator = std::function<std::optional<Mark>(const std::string& path)>;

struct DuplicateKey {
  YAML::Mark mark;
  std::string key;
};

bool is_null_plain(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// What a tasks file may expand to (yaml_budget.hpp): far beyond any real list (a task is about
// ten nodes), far below what would exhaust memory.
constexpr YamlLimits kYamlLimits{1'000'000, 64, 64u << 20};

// A YAML document as JSON: a plain null is null, a plain true/false a boolean, every other
// scalar its text (so a number stays as written). Nodes, depth and text within `budget`.
ojson to_json(const YAML::Node& node, YamlBudget& budget) {
  YamlBudget::Scope scope(budget, node, node.IsScalar() ? node.Scalar().size() : 0);
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "?") {
        if (is_null_plain(text)) return nullptr;
        if (text == "true" || text == "True" || text == "TRUE") return true;
        if (text == "false" || text == "False" || text == "FALSE") return false;
      }
      return text;
    }
    case YAML::NodeType::Sequence: {
      ojson arr = ojson::array();
      for (const auto& child : node) arr.push_back(to_json(child, budget));
      return arr;
    }
    case YAML::NodeType::Map: {
      ojson obj = ojson::object();
      for (const auto& kv : node) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
        if (obj.contains(key)) throw DuplicateKey{kv.first.Mark(), key};
        obj[key] = to_json(kv.second, budget);
      }
      return obj;
    }
  }
  return nullptr;
}

std::optional<Mark> mark_of(const YAML::Mark& m) {
  if (m.is_null()) return std::nullopt;
  return Mark{m.line + 1, m.column + 1};
}

// The mark of the node at `path` below `root` (of the deepest node found on the way); for an
// empty value, its key's (yaml-cpp marks an empty value where the next token is).
std::optional<Mark> locate_yaml(const YAML::Node& root, const std::string& path) {
  YAML::Node node = root;
  std::optional<Mark> found = mark_of(root.Mark());
  size_t pos = 1;
  while (pos <= path.size() && !path.empty()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    const std::string seg = path.substr(pos, end - pos);
    pos = end + 1;
    std::optional<YAML::Node> next;
    std::optional<Mark> key_mark;
    if (node.IsSequence()) {
      const size_t i = std::stoul(seg);
      const YAML::Node& seq = node;  // const: operator[] never adds a node
      if (i < seq.size()) next = seq[i];
    } else if (node.IsMap()) {
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && kv.first.Scalar() == seg) {
          next = kv.second;
          key_mark = mark_of(kv.first.Mark());
          break;
        }
      }
    }
    if (!next) break;
    node = *next;
    found = next->IsNull() && key_mark ? key_mark : mark_of(next->Mark());
    if (!found) found = key_mark;
  }
  return found;
}

const char* type_name(const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::null:
      return "null";
    case ojson::value_t::boolean:
      return "a boolean";
    case ojson::value_t::number_integer:
    case ojson::value_t::number_unsigned:
    case ojson::value_t::number_float:
      return "a number";
    case ojson::value_t::string:
      return "a string";
    case ojson::value_t::array:
      return "a list";
    case ojson::value_t::object:
      return "a map";
    default:
      return "a value";
  }
}

bool valid_id(std::string_view id) {
  if (id.empty()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// A string, or a number taken as its text (ids only).
std::optional<std::string> id_text(const ojson& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number()) return util::dump_json(j);
  return std::nullopt;
}

// Turns the parsed document into tasks, with errors located through `locate` when given.
class Validator {
 public:
  Validator(std::string_view name, Locator locate) : name_(name), locate_(std::move(locate)) {}

  Result<std::vector<TaskSpec>> run(const ojson& doc) {
    const ojson* list = &doc;
    std::string base;
    if (doc.is_object()) {
      auto it = doc.find("tasks");
      if (it == doc.end())
        return error("", "expected a list of tasks or a map with a 'tasks' list (no 'tasks' key)");
      list = &*it;
      base = "/tasks";
      if (list->is_null()) return error(base, "no tasks ('tasks' is empty)");
      if (!list->is_array())
        return error(base, fmt::format("'tasks' must be a list (got {})", type_name(*list)));
    } else if (doc.is_null()) {
      return error("", "no tasks (the file is empty)");
    } else if (!doc.is_array()) {
      return error("", fmt::format("expected a list of tasks or a map with a 'tasks' list (got {})",
                                   type_name(doc)));
    }
    if (list->empty()) return error(base, "no tasks (empty list)");

    std::vector<TaskSpec> tasks;
    tasks.reserve(list->size());
    std::unordered_map<std::string, size_t> seen;
    seen.reserve(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      const ojson& item = (*list)[i];
      const std::string path = base + "/" + std::to_string(i);
      std::string label = fmt::format("task {}", i + 1);
      if (!item.is_object())
        return error(path, fmt::format("{}: expected a map with an id and a title (got {})", label,
                                       type_name(item)));
      TaskSpec t;
      auto id = item.find("id");
      if (id == item.end() || id->is_null()) {
        t.id = fmt::format("task-{}", i + 1);
      } else if (auto text = id_text(*id)) {
        t.id = *text;
        if (!valid_id(t.id))
          return error(path + "/id",
                       fmt::format("{}: id '{}' must be non-empty and use only A-Z a-z 0-9 . _ -",
                                   label, t.id));
      } else {
        return error(path + "/id",
                     fmt::format("{}: id must be a string (got {})", label, type_name(*id)));
      }
      label = fmt::format("task {} ('{}')", i + 1, t.id);
      auto [prev, fresh] = seen.emplace(t.id, i);
      if (!fresh)
        return error(path + "/id",
                     fmt::format("{}: duplicate id (also task {})", label, prev->second + 1));

      auto title = item.find("title");
      if (title == item.end() || title->is_null())
        return error(path, fmt::format("{}: missing title", label));
      if (!title->is_string())
        return error(path + "/title",
                     fmt::format("{}: title must be a string (got {})", label, type_name(*title)));
      t.title = title->get<std::string>();
      if (t.title.find_first_not_of(" \t\r\n") == std::string::npos)
        return error(path + "/title", fmt::format("{}: missing title (empty)", label));

      if (auto d = item.find("description"); d != item.end() && !d->is_null()) {
        if (!d->is_string())
          return error(
              path + "/description",
              fmt::format("{}: description must be a string (got {})", label, type_name(*d)));
        t.description = d->get<std::string>();
      }
      // A NUL (JSON "\u0000", YAML "\0") would cut the prompt short on the client's command line.
      if (t.title.find('\0') != std::string::npos)
        return error(path + "/title", fmt::format("{}: title contains a NUL character", label));
      if (t.description.find('\0') != std::string::npos)
        return error(path + "/description",
                     fmt::format("{}: description contains a NUL character", label));
      if (auto r = string_list(item, path, label, "acceptance", false, t.acceptance); !r)
        return std::unexpected(r.error());
      if (auto r = string_list(item, path, label, "depends_on", true, t.depends_on); !r)
        return std::unexpected(r.error());
      if (auto d = item.find("done"); d != item.end() && !d->is_null()) {
        if (!d->is_boolean())
          return error(path + "/done", fmt::format("{}: done must be true or false (got {})", label,
                                                   type_name(*d)));
        t.done = d->get<bool>();
      }
      if (auto m = item.find("context_mode"); m != item.end() && !m->is_null()) {
        if (!m->is_string())
          return error(
              path + "/context_mode",
              fmt::format("{}: context_mode must be a string (got {})", label, type_name(*m)));
        t.context_mode = m->get<std::string>();
      }
      if (auto r = number(item, path, label, "max_iterations", 1, 10000, true); !r)
        return std::unexpected(r.error());
      else if (*r)
        t.max_iterations = static_cast<int>(**r);
      if (auto r = number(item, path, label, "max_tokens", 0, 1e15, true); !r)
        return std::unexpected(r.error());
      else if (*r)
        t.max_tokens = static_cast<uint64_t>(**r);
      if (auto r = number(item, path, label, "max_cost_usd", 0, 1e9, false); !r)
        return std::unexpected(r.error());
      else
        t.max_cost_usd = *r;
      tasks.push_back(std::move(t));
    }
    return tasks;
  }

 private:
  // A number field (YAML gives its scalars as text): nullopt when absent; an error when it is
  // not a number, not whole (`whole`), or outside [lo, hi].
  Result<std::optional<double>> number(const ojson& item, const std::string& path,
                                       const std::string& label, const char* field, double lo,
                                       double hi, bool whole) {
    auto it = item.find(field);
    if (it == item.end() || it->is_null()) return std::optional<double>();
    const std::string fpath = path + "/" + field;
    std::optional<double> v;
    if (it->is_number()) {
      v = it->get<double>();
    } else if (it->is_string()) {
      const std::string text = it->get<std::string>();
      char* end = nullptr;
      errno = 0;
      const double d = text.empty() ? 0 : std::strtod(text.c_str(), &end);
      if (!text.empty() && errno == 0 && end == text.c_str() + text.size() &&
          text.find_first_of("xXnN") == std::string::npos)
        v = d;
    }
    if (!v || !std::isfinite(*v))
      return error(fpath,
                   fmt::format("{}: {} must be a number (got {})", label, field, type_name(*it)));
    if ((whole && *v != std::floor(*v)) || *v < lo || *v > hi)
      return error(fpath, fmt::format("{}: {} must be {} from {} to {} (got {})", label, field,
                                      whole ? "a whole number" : "a number", lo, hi, *v));
    return v;
  }

  Result<void> string_list(const ojson& item, const std::string& path, const std::string& label,
                           const char* field, bool ids, std::vector<std::string>& out) {
    auto it = item.find(field);
    if (it == item.end() || it->is_null()) return {};
    const std::string fpath = path + "/" + field;
    if (!it->is_array())
      return error(fpath, fmt::format("{}: {} must be a list of strings (got {})", label, field,
                                      type_name(*it)));
    out.reserve(it->size());
    for (size_t k = 0; k < it->size(); ++k) {
      const ojson& v = (*it)[k];
      std::optional<std::string> text =
          ids ? id_text(v) : (v.is_string() ? std::optional(v.get<std::string>()) : std::nullopt);
      if (!text)
        return error(fpath + "/" + std::to_string(k),
                     fmt::format("{}: {} item {} must be a string (got {})", label, field, k + 1,
                                 type_name(v)));
      if (text->find('\0') != std::string::npos)
        return error(fpath + "/" + std::to_string(k),
                     fmt::format("{}: {} item {} contains a NUL character", label, field, k + 1));
      out.push_back(std::move(*text));
    }
    return {};
  }

  std::unexpected<Error> error(const std::string& path, const std::string& what) const {
    if (locate_)
      if (auto m = locate_(path))
        return fail(fmt::format("{}:{}:{}: {}", name_, m->line, m->column, what),
                    Error::Kind::Invalid);
    return fail(fmt::format("{}: {}", name_, what), Error::Kind::Invalid);
  }

  std::string_view name_;
  Locator locate_;
};

Result<std::vector<TaskSpec>> parse_yaml(std::string_view text, std::string_view name) {
  ojson doc;
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (docs.size() > 1) {
      const auto m = docs[1].Mark();
      return fail(fmt::format("{}:{}:{}: invalid YAML: more than one document", name, m.line + 1,
                              m.column + 1),
                  Error::Kind::Invalid);
    }
    if (!docs.empty()) {
      root = docs[0];
      YamlBudget budget(kYamlLimits);
      doc = to_json(root, budget);
    }
  } catch (const YamlTooLarge& e) {
    return fail(
        fmt::format("{}:{}:{}: invalid YAML: {}", name, e.mark.line + 1, e.mark.column + 1, e.what),
        Error::Kind::Invalid);
  } catch (const YAML::DeepRecursion& e) {
    return fail(fmt::format("{}:{}:{}: invalid YAML: nested too deeply", name, e.mark.line + 1,
                            e.mark.column + 1),
                Error::Kind::Invalid);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null())
      return fail(fmt::format("{}: invalid YAML: {}", name, e.msg), Error::Kind::Invalid);
    return fail(
        fmt::format("{}:{}:{}: invalid YAML: {}", name, e.mark.line + 1, e.mark.column + 1, e.msg),
        Error::Kind::Invalid);
  } catch (const DuplicateKey& d) {
    return fail(fmt::format("{}:{}:{}: invalid YAML: duplicate key '{}'", name, d.mark.line + 1,
                            d.mark.column + 1, d.key),
                Error::Kind::Invalid);
  }
  return Validator(name, [&root](const std::string& path) { return locate_yaml(root, path); })
      .run(doc);
}

// A first pass over JSON that only checks the syntax and the depth (nlohmann's callback parser
// is quadratic on a long list of objects, so the depth is not limited through it).
struct DepthCheck : nlohmann::json_sax<ojson> {
  int depth = 0;
  bool too_deep = false;
  std::string error;

  bool open() {
    too_deep = ++depth > kMaxJsonDepth;
    return !too_deep;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }
};

std::string json_error(std::string_view name, std::string what) {
  auto pos = what.find("parse error");
  return fmt::format("{}: invalid JSON: {}", name,
                     pos == std::string::npos ? what : what.substr(pos));
}

Result<std::vector<TaskSpec>> parse_json(std::string_view text, std::string_view name) {
  DepthCheck check;
  if (!ojson::sax_parse(text.begin(), text.end(), &check)) {
    if (check.too_deep)
      return fail(fmt::format("{}: nested deeper than {} levels", name, kMaxJsonDepth),
                  Error::Kind::Invalid);
    return fail(json_error(name, check.error), Error::Kind::Invalid);
  }
  ojson doc;
  try {
    doc = util::parse_ordered_json_or_throw(text);
  } catch (const ojson::parse_error& e) {
    return fail(json_error(name, e.what()), Error::Kind::Invalid);
  }
  return Validator(name, nullptr).run(doc);
}

// ---- Markdown ----

// The column of the first non-blank character (a tab advances to the next multiple of 4).
size_t indent_of(std::string_view line) {
  size_t col = 0;
  for (char c : line) {
    if (c == ' ')
      ++col;
    else if (c == '\t')
      col = (col / 4 + 1) * 4;
    else
      break;
  }
  return col;
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

struct ChecklistItem {
  size_t indent = 0;
  bool done = false;
  std::string_view text;
};

// "- [ ] text", "* [x] text", "+ [X] text" after blanks.
std::optional<ChecklistItem> checklist_item(std::string_view line) {
  const size_t b = line.find_first_not_of(" \t");
  if (b == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(b);
  if (s.size() < 5 || (s[0] != '-' && s[0] != '*' && s[0] != '+')) return std::nullopt;
  size_t i = 1;
  if (s[i] != ' ' && s[i] != '\t') return std::nullopt;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (s.size() < i + 3 || s[i] != '[' || s[i + 2] != ']') return std::nullopt;
  const char box = s[i + 1];
  if (box != ' ' && box != 'x' && box != 'X') return std::nullopt;
  if (s.size() > i + 3 && s[i + 3] != ' ' && s[i + 3] != '\t') return std::nullopt;
  return ChecklistItem{indent_of(line), box != ' ', trim(s.substr(i + 3))};
}

// A line opening or closing a fenced code block: its fence character.
char fence_of(std::string_view line) {
  std::string_view s = trim(line);
  if (s.size() >= 3 && (s.substr(0, 3) == "```" || s.substr(0, 3) == "~~~")) return s[0];
  return 0;
}

std::string dedent(std::vector<std::string_view>& lines) {
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  size_t cut = std::string_view::npos;
  for (size_t i = first; i < lines.size(); ++i)
    if (!trim(lines[i]).empty()) cut = std::min(cut, lines[i].find_first_not_of(" \t"));
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    if (i > first) out += '\n';
    if (!trim(lines[i]).empty()) out += lines[i].substr(cut);
  }
  return out;
}

Result<std::vector<TaskSpec>> parse_markdown(std::string_view text, std::string_view name) {
  std::vector<TaskSpec> tasks;
  std::vector<std::string_view> desc;
  size_t task_indent = 0;
  bool collecting = false;  // lines below belong to the last task
  constexpr size_t kNoSub = std::string_view::npos;
  size_t sub_indent = kNoSub;  // the last sub-item's indent, while its continuation may follow
  char fence = 0;
  auto finish = [&] {
    if (!tasks.empty() && !desc.empty()) tasks.back().description = dedent(desc);
    desc.clear();
  };
  size_t lineno = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    const char f = fence_of(line);
    std::optional<ChecklistItem> item = fence ? std::nullopt : checklist_item(line);
    if (f && (!fence || f == fence)) fence = fence ? 0 : f;

    if (item) {
      if (item->text.empty())
        return fail(fmt::format("{}:{}: a checklist item without a title", name, lineno),
                    Error::Kind::Invalid);
      if (collecting && item->indent > task_indent) {
        tasks.back().acceptance.emplace_back(item->text);
        sub_indent = item->indent;
        continue;
      }
      finish();
      TaskSpec t;
      t.id = fmt::format("task-{}", tasks.size() + 1);
      t.title = std::string(item->text);
      t.done = item->done;
      tasks.push_back(std::move(t));
      task_indent = item->indent;
      collecting = true;
      sub_indent = kNoSub;
      continue;
    }
    if (!collecting) continue;
    if (trim(line).empty()) {
      desc.push_back(line);
      continue;
    }
    const size_t indent = indent_of(line);
    if (indent <= task_indent) {
      finish();
      collecting = false;
      sub_indent = kNoSub;
      continue;
    }
    if (sub_indent != kNoSub && indent > sub_indent &&
        (desc.empty() || !trim(desc.back()).empty())) {
      tasks.back().acceptance.back() += ' ';
      tasks.back().acceptance.back() += trim(line);
      continue;
    }
    sub_indent = kNoSub;
    desc.push_back(line);
  }
  finish();
  if (tasks.empty())
    return fail(fmt::format("{}: no tasks (no '- [ ] title' checklist items)", name),
                Error::Kind::Invalid);
  return tasks;
}

}  // namespace

TaskListFormat detect_task_list_format(const fs::path& file, std::string_view text) {
  const std::string ext = util::ascii_lower(file.extension().string());
  if (ext == ".yaml" || ext == ".yml") return TaskListFormat::Yaml;
  if (ext == ".json") return TaskListFormat::Json;
  if (ext == ".md" || ext == ".markdown") return TaskListFormat::Markdown;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '[' || text[first] == '{'))
    return TaskListFormat::Json;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (checklist_item(line)) return TaskListFormat::Markdown;
    pos = end + 1;
  }
  return TaskListFormat::Yaml;
}

Result<std::vector<TaskSpec>> parse_task_list(std::string_view text, TaskListFormat format,
                                              std::string_view name) {
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    return fail(fmt::format("{}:{}: a NUL byte (not a text file)", name, line),
                Error::Kind::Invalid);
  }
  switch (format) {
    case TaskListFormat::Yaml:
      return parse_yaml(text, name);
    case TaskListFormat::Json:
      return parse_json(text, name);
    case TaskListFormat::Markdown:
      return parse_markdown(text, name);
  }
  return fail(fmt::format("{}: unknown tasks file format", name), Error::Kind::Invalid);
}

Result<std::vector<TaskSpec>> load_task_list(const fs::path& file) {
  auto text = util::read_file(file, {kMaxTaskListBytes});
  if (!text) return std::unexpected(text.error());
  return parse_task_list(*text, detect_task_list_format(file, *text), file.string());
}

Result<std::vector<TaskSpec>> order_tasks(std::vector<TaskSpec> tasks) {
  const size_t n = tasks.size();
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (!index.emplace(tasks[i].id, i).second)
      return fail(fmt::format("duplicate task id '{}'", tasks[i].id), Error::Kind::Invalid);
  // Dependencies as indices, checked before anything moves.
  std::vector<std::vector<size_t>> deps(n);
  for (size_t i = 0; i < n; ++i) {
    deps[i].reserve(tasks[i].depends_on.size());
    for (const auto& d : tasks[i].depends_on) {
      auto it = index.find(d);
      if (it == index.end())
        return fail(fmt::format("task '{}' depends on unknown task '{}'", tasks[i].id, d),
                    Error::Kind::Invalid);
      deps[i].push_back(it->second);
    }
  }
  // Depth-first from each task in file order, with an explicit stack (a chain of 100k tasks is
  // fine): a task is placed once all of its dependencies are.
  enum : unsigned char { kNew, kOpen, kPlaced };
  std::vector<unsigned char> state(n, kNew);
  std::vector<size_t> order;
  order.reserve(n);
  struct Frame {
    size_t task;
    size_t next_dep;
  };
  std::vector<Frame> stack;
  for (size_t root = 0; root < n; ++root) {
    if (state[root] != kNew) continue;
    stack.push_back({root, 0});
    state[root] = kOpen;
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next_dep == deps[top.task].size()) {
        state[top.task] = kPlaced;
        order.push_back(top.task);
        stack.pop_back();
        continue;
      }
      const size_t d = deps[top.task][top.next_dep++];
      if (state[d] == kPlaced) continue;
      if (state[d] == kOpen) {
        // The open frames from d to the top are the cycle.
        auto from =
            std::find_if(stack.begin(), stack.end(), [&](const Frame& f) { return f.task == d; });
        std::string path;
        for (auto it = from; it != stack.end(); ++it) path += tasks[it->task].id + " -> ";
        path += tasks[d].id;
        return fail("a cycle in depends_on: " + path, Error::Kind::Invalid);
      }
      state[d] = kOpen;
      stack.push_back({d, 0});
    }
  }
  std::vector<TaskSpec> out;
  out.reserve(n);
  for (size_t i : order) out.push_back(std::move(tasks[i]));
  return out;
}

}  // namespace ctxkit::workflow
