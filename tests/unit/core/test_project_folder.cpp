// The client's folder name of a project, checked against names the client's own function gives
// (Claude Code 2.1.332: each UTF-16 code unit but [a-zA-Z0-9] replaced by '-', a name over 200
// characters cut and followed by a hash of the path).
#include <gtest/gtest.h>

#include <string>

#include "core/config.hpp"
#include "core/project_folder.hpp"

namespace ctxkit::core {
namespace {

TEST(ProjectFolder, EachCharacterOfThePathIsOneDashWhateverItsUtf8Bytes) {
  EXPECT_EQ(project_folder_name("/home/me/app dir"), "-home-me-app-dir");
  EXPECT_EQ(project_folder_name("/home/me/caf\xc3\xa9"), "-home-me-caf-");
  EXPECT_EQ(project_folder_name("/home/me/\xd0\x9f\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82"),
            "-home-me-------");
  // A character above U+FFFF is a surrogate pair: two dashes.
  EXPECT_EQ(project_folder_name("/home/me/app \xf0\x9f\x9a\x80x"), "-home-me-app---x");
  // Ill-formed bytes, as the client decodes them: one dash per replacement character.
  EXPECT_EQ(project_folder_name("/x\xff\xe2\x82y"), "-x--y");
}

TEST(ProjectFolder, ALongNameIsCutAndEndsInTheClientsHashOfThePath) {
  EXPECT_EQ(project_folder_name("/srv/" + std::string(250, 'a')),
            "-srv-" + std::string(195, 'a') + "-z5vs61");
  EXPECT_EQ(project_folder_name("/srv/\xc3\xa9" + std::string(210, 'b') + "\xf0\x9f\x9a\x80"),
            "-srv--" + std::string(194, 'b') + "-9mwqat");
  const std::string exactly = "/" + std::string(199, 'c');
  EXPECT_EQ(project_folder_name(exactly), "-" + std::string(199, 'c'));
}

TEST(ProjectFolder, ExcludeProjectsMatchesProjectsWithNonAsciiPaths) {
  ArchiveConfig a;
  a.exclude_projects = {"/home/me/caf\xc3\xa9"};
  EXPECT_TRUE(a.excludes("-home-me-caf-"));
  EXPECT_FALSE(a.excludes("-home-me-caf--"));
  a.exclude_projects = {"caf\xc3\xa9"};  // the plain folder name
  EXPECT_TRUE(a.excludes("-home-me-caf-"));
  a.exclude_projects = {"/home/me/\xd0\x9f\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82"};
  EXPECT_TRUE(a.excludes("-home-me-------"));
  a.exclude_projects = {"/home/me/app \xf0\x9f\x9a\x80x"};
  EXPECT_TRUE(a.excludes("-home-me-app---x"));
  EXPECT_FALSE(a.excludes("-home-me-app-----x"));
}

// The client finds a long path's folder by its first 200 characters when the hash differs.
TEST(ProjectFolder, ExcludeProjectsMatchesALongPathsFolderWhateverItsHash) {
  ArchiveConfig a;
  a.exclude_projects = {"/srv/" + std::string(250, 'a')};
  const std::string head = "-srv-" + std::string(195, 'a');
  EXPECT_TRUE(a.excludes(head + "-z5vs61"));
  EXPECT_TRUE(a.excludes(head + "-1b2c3d"));
  EXPECT_FALSE(a.excludes(head));
  EXPECT_FALSE(a.excludes("-srv-" + std::string(194, 'a') + "b-z5vs61"));
}

}  // namespace
}  // namespace ctxkit::core
