#pragma once

// What a YAML document may expand to when it is turned into JSON, for the two readers of YAML
// (workflow templates, tasks files). Included only by workflow/ sources (yaml-cpp stays there).
//
// yaml-cpp resolves an alias into a reference to the anchored node, so loading is linear in the
// text, but every walk over the result visits an aliased node once per use: ten aliases of the
// previous line, eight lines deep, are 10^8 nodes from 500 bytes, and an alias inside its own
// anchored node (`steps: &a [ *a ]`) is a cycle, an endless walk. The conversion is the walk that
// builds something, so the budget is counted there, node by node as it is entered: nodes and
// bytes (scalar text, and the location paths a template keeps) of the expanded document, and its
// depth. The first excess throws, before anything larger is built, so a document costs at most
// the budget whatever its aliases do, and a cycle is just a depth that never ends. (A set of the
// nodes already visited would make the walk cheap but not the copies the conversion makes of
// them: the expanded size is what must be bounded.)

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ctxkit::workflow {

struct YamlLimits {
  size_t max_nodes;  // nodes of the expanded document (an alias counts each time it is used)
  size_t max_depth;  // nesting of collections
  size_t max_bytes;  // text of the expanded document
};

// Thrown by YamlBudget when the document passes a limit: the mark of the node where it did and
// a one-line reason.
struct YamlTooLarge {
  YAML::Mark mark;
  std::string what;
};

class YamlBudget {
 public:
  explicit YamlBudget(YamlLimits limits) : limits_(limits) {}

  // Enters `node` (one level below the node entered last and not left) and charges `bytes` of
  // text to it. Throws YamlTooLarge past a limit.
  void enter(const YAML::Node& node, size_t bytes) {
    ++nodes_;
    bytes_ += bytes;
    if (path_.size() >= limits_.max_depth) {
      // A node met twice on the way down is an alias inside the node it names: a cycle.
      for (size_t i = 0; i < path_.size(); ++i)
        for (size_t j = i + 1; j < path_.size(); ++j)
          if (path_[i].is(path_[j]))
            throw YamlTooLarge{
                path_[i].Mark(),
                "an alias refers to a node that contains it (the document would never end)"};
      throw YamlTooLarge{node.Mark(),
                         fmt::format("nested deeper than {} levels", limits_.max_depth)};
    }
    if (nodes_ > limits_.max_nodes)
      throw YamlTooLarge{
          node.Mark(),
          fmt::format(
              "the document expands to more than {} nodes (aliases counted each time they are "
              "used)",
              limits_.max_nodes)};
    if (bytes_ > limits_.max_bytes)
      throw YamlTooLarge{
          node.Mark(),
          fmt::format("the document expands to more than {} MiB of text (aliases counted each time "
                      "they are used)",
                      limits_.max_bytes >> 20)};
    path_.push_back(node);
  }
  // Leaves the node entered last.
  void leave() { path_.pop_back(); }

  // enter() and leave() around a scope.
  class Scope {
   public:
    Scope(YamlBudget& b, const YAML::Node& node, size_t bytes) : b_(b) { b_.enter(node, bytes); }
    ~Scope() { b_.leave(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    YamlBudget& b_;
  };

 private:
  YamlLimits limits_;
  size_t nodes_ = 0, bytes_ = 0;
  std::vector<YAML::Node> path_;
};

}  // namespace ctxkit::workflow
