#include "install/install_records.hpp"

#include <algorithm>

#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/paths.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

fs::path default_records_dir(const util::Env& env) {
  return util::xdg_state_home(env) / "ctxkit" / "install";
}

std::vector<fs::path> other_records(const std::string& name,
                                    const std::vector<std::string>& program_dirs,
                                    const fs::path& own, const util::Env& env) {
  std::vector<fs::path> dirs;
  for (const auto& d : program_dirs)
    if (!d.empty()) dirs.push_back((fs::path(d).parent_path() / "share" / "ctxkit"));
  std::vector<fs::path> out;
  if (dirs.empty()) return out;
  const fs::path shared = default_records_dir(env);
  dirs.push_back(shared);
  std::error_code ec;
  const fs::path self = own.empty() ? fs::path() : fs::weakly_canonical(own, ec);
  for (const auto& dir : dirs) {
    fs::path p = dir / name;
    if (!fs::is_regular_file(p, ec)) continue;
    if (dir == shared) {
      // The shared folder holds the record of whichever install used it: it is one of these only
      // when it names one of their folders (or, written before records named it, names none).
      ojson r = read_record(p);
      if (auto b = r.find("bin_dir"); b != r.end() && b->is_string() &&
                                      std::find(program_dirs.begin(), program_dirs.end(),
                                                b->get<std::string>()) == program_dirs.end())
        continue;
    }
    fs::path canon = fs::weakly_canonical(p, ec);
    if (ec) canon = p.lexically_normal();
    if (canon == self || std::find(out.begin(), out.end(), canon) != out.end()) continue;
    out.push_back(canon);
  }
  return out;
}

ojson read_record(const fs::path& path) {
  auto text = util::read_file(path, {1u << 20});
  if (!text || util::json_depth(*text, 64) > 64) return ojson::object();
  ojson j = util::parse_ordered_json(*text);
  return j.is_object() ? j : ojson::object();
}

void take_over_record(ojson& record, const ojson& other) {
  // A copy of the list: iterating it through other.find() makes GCC 12 report a null pointer
  // dereference inside the library (-Wnull-dereference) in this file.
  if (const ojson from = other.contains("created") ? other["created"] : ojson(); from.is_array()) {
    ojson& created = record["created"];
    if (!created.is_array()) created = ojson::array();
    for (const auto& name : from)
      if (name.is_string() && std::find(created.begin(), created.end(), name) == created.end())
        created.push_back(name);
  }
  for (const char* flag : {"created_file", "created_container"})
    if (other.value(flag, false)) record[flag] = true;
}

void remove_records(const std::vector<fs::path>& paths) {
  std::error_code ec;
  for (const auto& p : paths) fs::remove(p, ec);
}

}  // namespace ctxkit::install
