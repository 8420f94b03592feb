#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::workflow {
namespace {

std::vector<TaskSpec> parse_ok(const std::string& text, TaskListFormat format) {
  auto r = parse_task_list(text, format, "tasks");
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : std::vector<TaskSpec>{};
}

std::string parse_error(const std::string& text, TaskListFormat format) {
  auto r = parse_task_list(text, format, "tasks");
  EXPECT_FALSE(r.has_value()) << text;
  return r ? std::string() : r.error().message;
}

std::vector<std::string> ids(const std::vector<TaskSpec>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks) out.push_back(t.id);
  return out;
}

TaskSpec task(std::string id, std::vector<std::string> deps = {}) {
  TaskSpec t;
  t.id = std::move(id);
  t.title = "T " + t.id;
  t.depends_on = std::move(deps);
  return t;
}

std::string order_error(std::vector<TaskSpec> tasks) {
  auto r = order_tasks(std::move(tasks));
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().message;
}

// ---- format detection ----

TEST(TaskListFormat, ExtensionDecidesInAnyCase) {
  EXPECT_EQ(detect_task_list_format("t.yaml", "[]"), TaskListFormat::Yaml);
  EXPECT_EQ(detect_task_list_format("t.YML", "- [ ] x"), TaskListFormat::Yaml);
  EXPECT_EQ(detect_task_list_format("t.json", "- [ ] x"), TaskListFormat::Json);
  EXPECT_EQ(detect_task_list_format("t.md", "[1]"), TaskListFormat::Markdown);
  EXPECT_EQ(detect_task_list_format("t.Markdown", ""), TaskListFormat::Markdown);
}

TEST(TaskListFormat, ContentDecidesWithoutAKnownExtension) {
  EXPECT_EQ(detect_task_list_format("tasks", "  \n [{\"id\":1}]"), TaskListFormat::Json);
  EXPECT_EQ(detect_task_list_format("tasks.txt", "{\"tasks\": []}"), TaskListFormat::Json);
  EXPECT_EQ(detect_task_list_format("tasks", "# Plan\r\n\r\n- [ ] one\r\n"),
            TaskListFormat::Markdown);
  EXPECT_EQ(detect_task_list_format("tasks", "intro\n* [x] done one\n"), TaskListFormat::Markdown);
  EXPECT_EQ(detect_task_list_format("tasks", "- id: a\n  title: A\n"), TaskListFormat::Yaml);
  EXPECT_EQ(detect_task_list_format("tasks", "- [x, y]\n"), TaskListFormat::Yaml);
  EXPECT_EQ(detect_task_list_format("tasks", ""), TaskListFormat::Yaml);
}

// ---- YAML ----

TEST(TaskListYaml, ParsesAListWithEveryField) {
  auto tasks = parse_ok(R"(
- id: setup
  title: Set up the project
  description: |
    Create the layout.
    Add CI.
  acceptance: [builds, "tests pass"]
- id: feature
  title: Add the feature
  depends_on: [setup]
  unknown_key: ignored
)",
                        TaskListFormat::Yaml);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].id, "setup");
  EXPECT_EQ(tasks[0].title, "Set up the project");
  EXPECT_EQ(tasks[0].description, "Create the layout.\nAdd CI.\n");
  EXPECT_EQ(tasks[0].acceptance, (std::vector<std::string>{"builds", "tests pass"}));
  EXPECT_TRUE(tasks[0].depends_on.empty());
  EXPECT_FALSE(tasks[0].done);
  EXPECT_EQ(tasks[1].depends_on, std::vector<std::string>{"setup"});
  EXPECT_TRUE(tasks[1].acceptance.empty());
  EXPECT_EQ(tasks[1].description, "");
}

TEST(TaskListYaml, ParsesAMapWithATasksList) {
  auto tasks =
      parse_ok("name: plan\ntasks:\n  - {id: a, title: A, done: true}\n  - {id: b, title: B}\n",
               TaskListFormat::Yaml);
  EXPECT_EQ(ids(tasks), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(tasks[0].done);
  EXPECT_FALSE(tasks[1].done);
}

TEST(TaskListYaml, NumbersAsIdsAreStringsAndAMissingIdIsItsPlace) {
  auto tasks = parse_ok(
      "- {id: 1, title: one}\n- {id: 2.5, title: two, depends_on: [1]}\n- {title: three}\n",
      TaskListFormat::Yaml);
  EXPECT_EQ(ids(tasks), (std::vector<std::string>{"1", "2.5", "task-3"}));
  EXPECT_EQ(tasks[1].depends_on, std::vector<std::string>{"1"});
}

TEST(TaskListYaml, ErrorsNameTheFileLineColumnTaskAndField) {
  EXPECT_EQ(
      parse_error("- id: a\n  title: A\n- id: b\n  description: no title\n", TaskListFormat::Yaml),
      "tasks:3:3: task 2 ('b'): missing title");
  EXPECT_EQ(parse_error("- id: [x]\n  title: A\n", TaskListFormat::Yaml),
            "tasks:1:7: task 1: id must be a string (got a list)");
  EXPECT_EQ(parse_error("- id: true\n  title: A\n", TaskListFormat::Yaml),
            "tasks:1:7: task 1: id must be a string (got a boolean)");
  EXPECT_EQ(parse_error("- {id: a, title: A}\n- {id: a, title: B}\n", TaskListFormat::Yaml),
            "tasks:2:8: task 2 ('a'): duplicate id (also task 1)");
  EXPECT_EQ(parse_error("- {id: 'a b', title: A}\n", TaskListFormat::Yaml),
            "tasks:1:8: task 1: id 'a b' must be non-empty and use only A-Z a-z 0-9 . _ -");
  EXPECT_EQ(parse_error("- {id: 'a/b', title: A}\n", TaskListFormat::Yaml),
            "tasks:1:8: task 1: id 'a/b' must be non-empty and use only A-Z a-z 0-9 . _ -");
  EXPECT_EQ(parse_error("- id: a\n  title: A\n  acceptance: builds\n", TaskListFormat::Yaml),
            "tasks:3:15: task 1 ('a'): acceptance must be a list of strings (got a string)");
  EXPECT_EQ(parse_error("- id: a\n  title: A\n  acceptance:\n    - ok\n    - {x: 1}\n",
                        TaskListFormat::Yaml),
            "tasks:5:7: task 1 ('a'): acceptance item 2 must be a string (got a map)");
  EXPECT_EQ(parse_error("- id: a\n  title: A\n  depends_on: [[b]]\n", TaskListFormat::Yaml),
            "tasks:3:16: task 1 ('a'): depends_on item 1 must be a string (got a list)");
  EXPECT_EQ(parse_error("- id: a\n  title: {x: 1}\n", TaskListFormat::Yaml),
            "tasks:2:10: task 1 ('a'): title must be a string (got a map)");
  EXPECT_EQ(parse_error("- id: a\n  title: A\n  description: [x]\n", TaskListFormat::Yaml),
            "tasks:3:16: task 1 ('a'): description must be a string (got a list)");
  EXPECT_EQ(parse_error("- id: a\n  title: A\n  done: maybe\n", TaskListFormat::Yaml),
            "tasks:3:9: task 1 ('a'): done must be true or false (got a string)");
  EXPECT_EQ(parse_error("- just a string\n", TaskListFormat::Yaml),
            "tasks:1:3: task 1: expected a map with an id and a title (got a string)");
}

TEST(TaskListYaml, EmptyAndMalformedDocumentsAreErrors) {
  EXPECT_EQ(parse_error("[]\n", TaskListFormat::Yaml), "tasks:1:1: no tasks (empty list)");
  EXPECT_EQ(parse_error("", TaskListFormat::Yaml), "tasks: no tasks (the file is empty)");
  EXPECT_EQ(parse_error("tasks:\n", TaskListFormat::Yaml),
            "tasks:1:1: no tasks ('tasks' is empty)");
  EXPECT_EQ(parse_error("tasks: 3\n", TaskListFormat::Yaml),
            "tasks:1:8: 'tasks' must be a list (got a string)");
  EXPECT_EQ(parse_error("name: x\n", TaskListFormat::Yaml),
            "tasks:1:1: expected a list of tasks or a map with a 'tasks' list (no 'tasks' key)");
  EXPECT_EQ(parse_error("just text\n", TaskListFormat::Yaml),
            "tasks:1:1: expected a list of tasks or a map with a 'tasks' list (got a string)");
  EXPECT_EQ(parse_error("- {id: a, id: b, title: A}\n", TaskListFormat::Yaml),
            "tasks:1:11: invalid YAML: duplicate key 'id'");
  EXPECT_EQ(parse_error("- {id: a, title: A}\n---\n- {id: b, title: B}\n", TaskListFormat::Yaml),
            "tasks:3:1: invalid YAML: more than one document");
  EXPECT_EQ(parse_error("- id: a\n title: [\n", TaskListFormat::Yaml).rfind("tasks:2:", 0), 0u);
}

TEST(TaskListYaml, DeepNestingIsAnErrorNotACrash) {
  std::string flow(100000, '[');
  EXPECT_EQ(parse_error(flow, TaskListFormat::Yaml), "tasks:1:1: invalid YAML: nested too deeply");
  std::string block;
  for (int i = 0; i < 100000; ++i) block += "- ";
  block += "x\n";
  EXPECT_EQ(parse_error(block, TaskListFormat::Yaml),
            "tasks:1:1000: invalid YAML: nested too deeply");
}

TEST(TaskListYaml, AnAliasBombIsRefusedInOneLine) {
  // Ten aliases of the line before, eight lines deep: 10^8 nodes from 500 bytes.
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  y += "tasks:\n  - {id: a, title: A}\n";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = parse_error(y, TaskListFormat::Yaml);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_NE(e.find("tasks:"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid YAML: the document expands to more than 1000000 nodes"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(parse_error("tasks: " + std::string(80, '[') + std::string(80, ']') + "\n",
                        TaskListFormat::Yaml),
            "tasks:1:71: invalid YAML: nested deeper than 64 levels");
  // A few aliases are fine.
  auto tasks = parse_ok(
      "d: &d Shared text.\ntasks:\n  - {id: a, title: A, description: *d}\n  - {id: b, title: B, "
      "description: *d}\n",
      TaskListFormat::Yaml);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].description, "Shared text.");
}

TEST(TaskListYaml, AnAliasIntoItsOwnNodeIsAnErrorNotACrash) {
  EXPECT_EQ(parse_error("tasks: &a [ *a ]\n", TaskListFormat::Yaml),
            "tasks:1:8: invalid YAML: an alias refers to a node that contains it (the document "
            "would never end)");
  EXPECT_NE(parse_error("- &t {id: a, title: A, sub: *t}\n", TaskListFormat::Yaml)
                .find("an alias refers to a node that contains it"),
            std::string::npos);
}

// A NUL written as an escape would cut the prompt short on the client's command line.
TEST(TaskListParse, AnEscapedNulIsRefusedInOneLine) {
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "description": "before\u0000after"}])",
                        TaskListFormat::Json),
            "tasks: task 1 ('a'): description contains a NUL character");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A\u0000"}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): title contains a NUL character");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "acceptance": ["ok", "x\u0000"]}])",
                        TaskListFormat::Json),
            "tasks: task 1 ('a'): acceptance item 2 contains a NUL character");
  EXPECT_EQ(parse_error("- {id: a, title: A, description: \"x\\0y\"}\n", TaskListFormat::Yaml),
            "tasks:1:34: task 1 ('a'): description contains a NUL character");
}

// ---- JSON ----

TEST(TaskListJson, ParsesAListAndATasksMap) {
  auto tasks = parse_ok(
      R"([{"id": "a", "title": "A", "description": "d", "acceptance": ["x"], "depends_on": []},
                            {"id": 7, "title": "B", "depends_on": ["a"], "extra": {"ignored": true}}])",
      TaskListFormat::Json);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].description, "d");
  EXPECT_EQ(tasks[0].acceptance, std::vector<std::string>{"x"});
  EXPECT_EQ(tasks[1].id, "7");
  auto wrapped = parse_ok(R"({"tasks": [{"id": "a", "title": "A"}]})", TaskListFormat::Json);
  EXPECT_EQ(ids(wrapped), std::vector<std::string>{"a"});
}

TEST(TaskListJson, ErrorsNameTheFileTaskAndField) {
  EXPECT_EQ(parse_error(R"([{"id": "a"}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): missing title");
  EXPECT_EQ(parse_error(R"([{"id": null, "title": ""}])", TaskListFormat::Json),
            "tasks: task 1 ('task-1'): missing title (empty)");
  EXPECT_EQ(parse_error(R"([{"id": false, "title": "A"}])", TaskListFormat::Json),
            "tasks: task 1: id must be a string (got a boolean)");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": 3}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): title must be a string (got a number)");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "acceptance": [1]}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): acceptance item 1 must be a string (got a number)");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "depends_on": "b"}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): depends_on must be a list of strings (got a string)");
  EXPECT_EQ(parse_error(R"([{"id": "x", "title": "A"}, {"id": "x", "title": "B"}])",
                        TaskListFormat::Json),
            "tasks: task 2 ('x'): duplicate id (also task 1)");
  EXPECT_EQ(parse_error(R"([{"id": "", "title": "A"}])", TaskListFormat::Json),
            "tasks: task 1: id '' must be non-empty and use only A-Z a-z 0-9 . _ -");
  EXPECT_EQ(parse_error("[]", TaskListFormat::Json), "tasks: no tasks (empty list)");
  EXPECT_EQ(parse_error("{}", TaskListFormat::Json),
            "tasks: expected a list of tasks or a map with a 'tasks' list (no 'tasks' key)");
  EXPECT_EQ(parse_error("[1,", TaskListFormat::Json)
                .rfind("tasks: invalid JSON: parse error at line 1, column 4", 0),
            0u);
}

// The runner's keys of a task: its context mode, its attempts and its budgets, in YAML (scalars
// as text) and JSON (numbers).
TEST(TaskList, TheRunnersKeysOfATask) {
  for (
      auto [text, format] :
      {std::pair<std::string, TaskListFormat>{
           "- {id: a, title: A, context_mode: auto, max_iterations: 4, "
           "max_tokens: 50000, max_cost_usd: 1.5}\n- {id: b, title: B}\n",
           TaskListFormat::Yaml},
       {R"([{"id": "a", "title": "A", "context_mode": "auto", "max_iterations": 4, "max_tokens": 50000,
                                    "max_cost_usd": 1.5}, {"id": "b", "title": "B"}])",
        TaskListFormat::Json}}) {
    auto tasks = parse_ok(text, format);
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].context_mode, "auto");
    EXPECT_EQ(tasks[0].max_iterations, 4);
    EXPECT_EQ(tasks[0].max_tokens, 50000u);
    EXPECT_EQ(tasks[0].max_cost_usd, 1.5);
    EXPECT_EQ(tasks[1].context_mode, "");
    EXPECT_EQ(tasks[1].max_iterations, 0);
    EXPECT_FALSE(tasks[1].max_tokens);
    EXPECT_FALSE(tasks[1].max_cost_usd);
  }
  EXPECT_EQ(
      parse_error(R"([{"id": "a", "title": "A", "max_tokens": -5}])", TaskListFormat::Json),
      "tasks: task 1 ('a'): max_tokens must be a whole number from 0 to 1000000000000000 (got -5)");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "max_tokens": 1.5}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): max_tokens must be a whole number from 0 to 1000000000000000 "
            "(got 1.5)");
  EXPECT_EQ(
      parse_error(R"([{"id": "a", "title": "A", "max_iterations": 0}])", TaskListFormat::Json),
      "tasks: task 1 ('a'): max_iterations must be a whole number from 1 to 10000 (got 0)");
  EXPECT_EQ(
      parse_error(R"([{"id": "a", "title": "A", "max_cost_usd": "lots"}])", TaskListFormat::Json),
      "tasks: task 1 ('a'): max_cost_usd must be a number (got a string)");
  EXPECT_EQ(
      parse_error(R"([{"id": "a", "title": "A", "max_cost_usd": [1]}])", TaskListFormat::Json),
      "tasks: task 1 ('a'): max_cost_usd must be a number (got a list)");
  EXPECT_EQ(parse_error(R"([{"id": "a", "title": "A", "context_mode": 3}])", TaskListFormat::Json),
            "tasks: task 1 ('a'): context_mode must be a string (got a number)");
  EXPECT_NE(parse_error("- {id: a, title: A, max_cost_usd: nan}\n", TaskListFormat::Yaml)
                .find("max_cost_usd must be a number"),
            std::string::npos);
}

TEST(TaskListJson, DeepNestingIsAnErrorNotACrash) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parse_error(deep, TaskListFormat::Json), "tasks: nested deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100000, '}');
  EXPECT_EQ(parse_error(objects, TaskListFormat::Json), "tasks: nested deeper than 64 levels");
}

TEST(TaskList, NulBytesAreRefusedInEveryFormat) {
  const std::string text = std::string("- [ ] a\n- [ ] b") + '\0' + "c\n";
  for (auto f : {TaskListFormat::Yaml, TaskListFormat::Json, TaskListFormat::Markdown})
    EXPECT_EQ(parse_error(text, f), "tasks:2: a NUL byte (not a text file)");
}

// ---- Markdown ----

TEST(TaskListMarkdown, ChecklistItemsAreTasksWithDescriptionsAndSubItems) {
  auto tasks = parse_ok(
      "# Plan\n"
      "\n"
      "Some intro text.\n"
      "- [ ] Set up the project\n"
      "  Create the layout\n"
      "    and keep this indentation.\n"
      "\n"
      "  Second paragraph.\n"
      "  - [ ] it builds\n"
      "  - [x] tests pass\n"
      "    on every platform\n"
      "* [x] Write docs\n"
      "+ [X] Release\n"
      "- [ ]   Trim me   \n"
      "not indented: ends the description\n"
      "  so this is not a description line\n"
      "- plain list item, not a task\n",
      TaskListFormat::Markdown);
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(ids(tasks), (std::vector<std::string>{"task-1", "task-2", "task-3", "task-4"}));
  EXPECT_EQ(tasks[0].title, "Set up the project");
  EXPECT_EQ(tasks[0].description,
            "Create the layout\n  and keep this indentation.\n\nSecond paragraph.");
  EXPECT_EQ(tasks[0].acceptance,
            (std::vector<std::string>{"it builds", "tests pass on every platform"}));
  EXPECT_FALSE(tasks[0].done);
  EXPECT_EQ(tasks[1].title, "Write docs");
  EXPECT_TRUE(tasks[1].done);
  EXPECT_TRUE(tasks[2].done);
  EXPECT_EQ(tasks[3].title, "Trim me");
  EXPECT_EQ(tasks[3].description, "");
}

TEST(TaskListMarkdown, CrlfAndFencedCodeAndIndentedTopLevel) {
  auto tasks = parse_ok(
      "- [ ] one\r\n"
      "  details\r\n"
      "```\r\n"
      "- [ ] not a task: inside a code block\r\n"
      "```\r\n"
      "  - [ ] a top-level item after a non-indented line\r\n",
      TaskListFormat::Markdown);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].description, "details");
  EXPECT_EQ(tasks[1].title, "a top-level item after a non-indented line");
  EXPECT_TRUE(tasks[0].acceptance.empty());
}

TEST(TaskListMarkdown, ErrorsForNoItemsAndEmptyTitles) {
  EXPECT_EQ(parse_error("# Nothing\n- a\n- [] b\n", TaskListFormat::Markdown),
            "tasks: no tasks (no '- [ ] title' checklist items)");
  EXPECT_EQ(parse_error("- [ ] a\n- [ ]\n", TaskListFormat::Markdown),
            "tasks:2: a checklist item without a title");
}

// ---- loading ----

TEST(TaskListLoad, ReadsAFileByExtensionAndNamesItInErrors) {
  test::TempDir dir;
  auto md = dir.write("TODO.md", "- [ ] a\n- [x] b\n");
  auto tasks = load_task_list(md);
  ASSERT_TRUE(tasks) << tasks.error().message;
  EXPECT_EQ(tasks->size(), 2u);
  auto bad = dir.write("tasks.yaml", "- id: a\n");
  auto r = load_task_list(bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, bad.string() + ":1:3: task 1 ('a'): missing title");
  auto missing = load_task_list(dir / "none.yaml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);
  auto folder = load_task_list(dir.path());
  ASSERT_FALSE(folder);
  EXPECT_NE(folder.error().message.find("not a regular file"), std::string::npos)
      << folder.error().message;
}

TEST(TaskListLoad, AFifoIsRefusedWithoutBlocking) {
  test::TempDir dir;
  auto fifo = dir / "tasks.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = load_task_list(fifo);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos) << r.error().message;
}

TEST(TaskListLoad, AFileOverTheLimitIsRefused) {
  test::TempDir dir;
  auto big = dir / "big.json";
  {
    std::ofstream out(big);
    out << std::string(kMaxTaskListBytes + 1, ' ');
  }
  auto r = load_task_list(big);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("larger than"), std::string::npos) << r.error().message;
}

TEST(TaskListLoad, AHundredThousandTasksLoadAndOrder) {
  constexpr int kCount = 100000;
  constexpr int kYamlCount = 20000;  // yaml-cpp builds a node per scalar: kept smaller here
  std::string yaml, json = "[", md;
  for (int i = 0; i < kCount; ++i) {
    // Each task depends on the next one: the order is the file reversed.
    const std::string id = "t" + std::to_string(i), next = "t" + std::to_string(i + 1);
    json += (i ? "," : "") + std::string("{\"id\":\"") + id +
            "\",\"title\":\"T\",\"depends_on\":[" +
            (i + 1 < kCount ? "\"" + next + "\"" : std::string()) + "]}";
    if (i < kYamlCount)
      yaml += "- {id: " + id + ", title: T, depends_on: [" +
              (i + 1 < kYamlCount ? next : std::string()) + "]}\n";
    md += "- [ ] task " + std::to_string(i) + "\n  desc\n";
  }
  json += "]";
  auto j = parse_ok(json, TaskListFormat::Json);
  ASSERT_EQ(j.size(), static_cast<size_t>(kCount));
  auto ordered = order_tasks(std::move(j));
  ASSERT_TRUE(ordered) << ordered.error().message;
  EXPECT_EQ(ordered->front().id, "t99999");
  EXPECT_EQ(ordered->back().id, "t0");
  auto y = parse_ok(yaml, TaskListFormat::Yaml);
  ASSERT_EQ(y.size(), static_cast<size_t>(kYamlCount));
  EXPECT_EQ(y.back().depends_on, std::vector<std::string>{});
  EXPECT_EQ(y.front().depends_on, std::vector<std::string>{"t1"});
  auto m = parse_ok(md, TaskListFormat::Markdown);
  ASSERT_EQ(m.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(m.back().description, "desc");
}

// ---- ordering ----

TEST(OrderTasks, OrderedInputIsUnchanged) {
  auto r = order_tasks({task("a"), task("b", {"a"}), task("c", {"a", "b"})});
  ASSERT_TRUE(r);
  EXPECT_EQ(ids(*r), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(OrderTasks, DependenciesMoveUpJustBeforeTheirFirstDependent) {
  auto r =
      order_tasks({task("a", {"c"}), task("b"), task("c", {"d"}), task("d"), task("e", {"b"})});
  ASSERT_TRUE(r);
  EXPECT_EQ(ids(*r), (std::vector<std::string>{"d", "c", "a", "b", "e"}));
  EXPECT_EQ(r->at(2).title, "T a");
  EXPECT_EQ(r->at(2).depends_on, std::vector<std::string>{"c"});
}

TEST(OrderTasks, UnknownDependencyIsAnError) {
  EXPECT_EQ(order_error({task("a"), task("b", {"x"})}), "task 'b' depends on unknown task 'x'");
}

TEST(OrderTasks, CyclesAreNamed) {
  EXPECT_EQ(order_error({task("a", {"b"}), task("b", {"a"})}),
            "a cycle in depends_on: a -> b -> a");
  EXPECT_EQ(order_error({task("x"), task("a", {"x", "b"}), task("b", {"c"}), task("c", {"a"})}),
            "a cycle in depends_on: a -> b -> c -> a");
  EXPECT_EQ(order_error({task("s", {"s"})}), "a cycle in depends_on: s -> s");
}

TEST(OrderTasks, DuplicateIdsAreAnError) {
  EXPECT_EQ(order_error({task("a"), task("a")}), "duplicate task id 'a'");
}

TEST(OrderTasks, EmptyListIsEmpty) {
  auto r = order_tasks({});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace ctxkit::workflow
