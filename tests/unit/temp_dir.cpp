#include "unit/temp_dir.hpp"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

fs::path fixtures() {
  return CTXKIT_FIXTURES;
}

fs::path fixture_root() {
  return fs::path(CTXKIT_FIXTURES).parent_path();
}

std::vector<std::string> client_fixture_dirs() {
  std::vector<std::pair<std::vector<int>, std::string>> found;
  for (const auto& e : fs::directory_iterator(fixture_root())) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || !name.starts_with("claude-code-")) continue;
    std::vector<int> version;
    std::string_view rest = std::string_view(name).substr(12);
    while (!rest.empty()) {
      const size_t dot = rest.find('.');
      version.push_back(std::atoi(std::string(rest.substr(0, dot)).c_str()));
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    found.emplace_back(version, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

std::vector<std::string> fixture_sets(const std::string& part) {
  std::vector<std::string> out;
  for (const std::string& version : client_fixture_dirs()) {
    for (const char* model : {"claude-opus-4-8", "claude-sonnet-4-5"}) {
      const fs::path p = part == "stream-json" ? fixture_root() / version / "stream-json" / model
                                               : fixture_root() / version / model / part;
      if (fs::exists(p)) out.push_back(version + "/" + model);
    }
  }
  return out;
}

std::string fixture_set_name(const std::string& set) {
  std::string out = "v";
  for (char c : set.substr(std::string_view("claude-code-").size()))
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

fs::path fixture_path(const std::string& set, const std::string& part) {
  return fixture_root() / set / part;
}

std::vector<fs::path> main_transcripts(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".jsonl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> recorded_transcripts(const std::string& set) {
  std::vector<fs::path> out;
  for (const char* part : {"basic", "d_compact"}) {
    const fs::path dir = fixture_path(set, part);
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".jsonl" &&
          e.path().filename() != "hooks.jsonl")
        out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

int64_t usage_of_tool_use(const std::vector<std::string>& lines, const std::string& id,
                          size_t& index) {
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

std::vector<int> exit_codes_of_children(int n, const std::function<int(int)>& work) {
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(work(i));
    kids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t k : kids) {
    int status = 0;
    const bool waited = k > 0 && ::waitpid(k, &status, 0) == k;
    codes.push_back(waited && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

}  // namespace ctxkit::test
