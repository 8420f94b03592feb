#include "install/skills.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;

// Copies every skills/<name>/ that has a SKILL.md into `dest`/<name>/, replacing "@CTXKIT_BIN@"
// by `bin_ref` (the empty string: the programs are called by name, the plugin's bin/ is on PATH).
// Returns the files written.
Result<std::vector<fs::path>> copy_skills(const fs::path& from, const fs::path& dest,
                                          const std::string& bin_ref, std::ostream& out) {
  std::vector<fs::path> written;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return written;
  std::vector<fs::path> skills;
  for (const auto& e : fs::directory_iterator(from, ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "SKILL.md")) skills.push_back(e.path());
  std::sort(skills.begin(), skills.end());
  for (const auto& dir : skills) {
    fs::path out_dir = dest / dir.filename();
    fs::create_directories(out_dir, ec);
    if (ec) return fail(fmt::format("creating {}: {}", out_dir.string(), ec.message()));
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir, ec))
      if (f.is_regular_file()) files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto text = util::read_file(f, {1u << 20});
      if (!text) return std::unexpected(text.error());
      std::string text_out;
      const std::string mark = bin_ref.empty() ? "@CTXKIT_BIN@/" : "@CTXKIT_BIN@";
      size_t pos = 0;
      while (true) {
        const size_t at = text->find(mark, pos);
        if (at == std::string::npos) break;
        text_out.append(*text, pos, at - pos).append(bin_ref);
        pos = at + mark.size();
      }
      text_out.append(*text, pos);
      fs::path target = out_dir / f.filename();
      CTXKIT_TRY(util::write_file_atomic(target, text_out, 0644));
      written.push_back(target);
    }
    out << "installed skill /" << dir.filename().string() << '\n';
  }
  return written;
}

// The files a skills list names.
std::vector<fs::path> listed_skills(const fs::path& list) {
  std::vector<fs::path> out;
  auto text = util::read_file(list, {4u << 20});
  if (!text) return out;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t nl = text->find('\n', pos);
    std::string line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text->size() : nl + 1;
    if (!line.empty() && line.front() != '#') out.emplace_back(line);
  }
  return out;
}

// The folder of the install that wrote a skills list; empty when the list does not say.
std::string skills_owner(const fs::path& list) {
  auto text = util::read_file(list, {4u << 20});
  if (!text || !text->starts_with(kSkillsOwner)) return {};
  return text->substr(kSkillsOwner.size(), text->find('\n') - kSkillsOwner.size());
}

// Removes `files` and the folders left empty by that.
void remove_skill_files(const std::vector<fs::path>& files, std::ostream& out) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& f : files) {
    if (fs::remove(f, ec)) out << "removed: " << f.string() << '\n';
    if (std::find(dirs.begin(), dirs.end(), f.parent_path()) == dirs.end())
      dirs.push_back(f.parent_path());
  }
  for (const auto& d : dirs)
    if (fs::is_directory(d, ec) && fs::is_empty(d, ec)) fs::remove(d, ec);
}

// Removes the files the skills list names, the folders left empty by that, and the list.
void remove_skills(const fs::path& list, std::ostream& out) {
  remove_skill_files(listed_skills(list), out);
  std::error_code ec;
  fs::remove(list, ec);
  if (fs::is_directory(list.parent_path(), ec) && fs::is_empty(list.parent_path(), ec))
    fs::remove(list.parent_path(), ec);
}

Result<void> write_skills_list(const fs::path& file, const std::string& bin_dir,
                               const std::vector<fs::path>& lines) {
  std::string text = std::string(kSkillsOwner) + bin_dir + "\n";
  for (const auto& l : lines) text += l.string() + "\n";
  return util::write_file_atomic(file, text, 0644);
}

}  // namespace ctxkit::install
