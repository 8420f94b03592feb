#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::install {

// Copies every skills/<name>/ that has a SKILL.md into `dest`/<name>/, replacing "@CTXKIT_BIN@"
// by `bin_ref` (the empty string: the programs are called by name, the plugin's bin/ is on PATH).
// Says "installed skill /<name>" on `out` for each. Returns the files written.
[[nodiscard]] Result<std::vector<std::filesystem::path>> copy_skills(
    const std::filesystem::path& from, const std::filesystem::path& dest,
    const std::string& bin_ref, std::ostream& out);

// The files a skills list names.
std::vector<std::filesystem::path> listed_skills(const std::filesystem::path& list);

// The first line of a skills list names the programs' folder of the install that wrote it.
constexpr std::string_view kSkillsOwner = "# installed by ctxkit in ";

// The folder of the install that wrote a skills list; empty when the list does not say.
std::string skills_owner(const std::filesystem::path& list);

// Removes `files` (saying "removed: <file>" on `out` for each) and the folders left empty by that.
void remove_skill_files(const std::vector<std::filesystem::path>& files, std::ostream& out);

// Removes the files the skills list names, the folders left empty by that, and the list.
void remove_skills(const std::filesystem::path& list, std::ostream& out);

// Writes the skills list: the owner line (kSkillsOwner and `bin_dir`), then the files written.
[[nodiscard]] Result<void> write_skills_list(const std::filesystem::path& file,
                                             const std::string& bin_dir,
                                             const std::vector<std::filesystem::path>& lines);

}  // namespace ctxkit::install
