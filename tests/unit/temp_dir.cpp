#include "unit/temp_dir.hpp"

#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ctxkit::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string templ = (fs::temp_directory_path() / "ctxkit-test-XXXXXX").string();
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

util::Env TempDir::env() const {
  util::Env env;
  env.set("HOME", (path_ / "home").string());
  env.set("XDG_CONFIG_HOME", (path_ / "home" / ".config").string());
  env.set("XDG_STATE_HOME", (path_ / "home" / ".local" / "state").string());
  env.set("PATH", "/usr/local/bin:/usr/bin:/bin");
  return env;
}

fs::path TempDir::write(const std::string& name, const std::string& content) const {
  fs::path p = path_ / name;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  return p;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fixtures() { return CTXKIT_FIXTURES; }

std::vector<std::string> file_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

std::string first_lines(const std::vector<std::string>& lines, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && i < lines.size(); ++i) s += lines[i] + "\n";
  return s;
}

int64_t usage_of_tool_use(const std::vector<std::string>& lines, const std::string& id, size_t& index) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("\"id\":\"" + id + "\"") == std::string::npos) continue;
    auto j = nlohmann::json::parse(lines[i]);
    if (j["type"] != "assistant") continue;
    auto u = j["message"]["usage"];
    index = i;
    return u["input_tokens"].get<int64_t>() + u["cache_creation_input_tokens"].get<int64_t>() +
           u["cache_read_input_tokens"].get<int64_t>();
  }
  return -1;
}


}  // namespace ctxkit::test
