#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::util {

// A snapshot of environment variables, passed explicitly so that tools can be run in-process
// with a controlled environment.
class Env {
 public:
  Env() = default;
  explicit Env(std::map<std::string, std::string, std::less<>> vars) : vars_(std::move(vars)) {}
  // The environment of this process.
  static Env from_process();
  // The value of `name`, or nullopt when unset. An empty value counts as set.
  std::optional<std::string> get(std::string_view name) const;
  // The value of `name` when set and non-empty.
  std::optional<std::string> get_nonempty(std::string_view name) const;
  void set(std::string name, std::string value) { vars_[std::move(name)] = std::move(value); }
  const std::map<std::string, std::string, std::less<>>& vars() const { return vars_; }

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

}  // namespace ctxkit::util
