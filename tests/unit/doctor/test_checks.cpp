#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "doctor/checks.hpp"
#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::doctor {
namespace {
namespace fs = std::filesystem;
using test::TempDir;

// Inputs over a fresh home: the client's files in it, no program installed beside them.
struct DoctorBench {
  TempDir tmp;
  DoctorInputs in;
  DoctorBench() {
    in.env = tmp.env();
    in.env.set("PATH", "");
    in.cfg = core::load_config(in.env, {});
    in.loc = in.cfg.locations(in.env);
    in.settings_path = in.loc.claude_config_dir / "settings.json";
    in.claude_json_path = in.loc.home / ".claude.json";
    in.bin_dir = tmp / "bin";
    in.version = "9.9.9";
  }
  fs::path state_db() {
    auto s = store::StateStore::open(in.loc.state_db(), 1000);
    EXPECT_TRUE(s) << s.error().message;
    return in.loc.state_db();
  }
};

const Finding* find(const std::vector<Finding>& fs, const std::string& area, Status status) {
  for (const auto& f : fs)
    if (f.area == area && f.status == status) return &f;
  return nullptr;
}

TEST(DoctorFindings, TextAndJsonSayEachFindingAndTheVerdict) {
  const std::vector<Finding> findings = {
      {"programs", Status::Ok, "16 of 16 programs answer", ""},
      {"state", Status::Fault, "state.db is damaged", "mv state.db state.db.corrupt"},
      {"cap", Status::Warning, "an old client", "update it"}};
  EXPECT_EQ(findings_text(findings),
            "ok    programs: 16 of 16 programs answer\n"
            "FAULT state: state.db is damaged → mv state.db state.db.corrupt\n"
            "WARN  cap: an old client → update it\n"
            "1 faults, 1 warnings\n");
  EXPECT_EQ(findings_text({findings[0], findings[2]}),
            "ok    programs: 16 of 16 programs answer\n"
            "WARN  cap: an old client → update it\n"
            "healthy (1 warnings)\n");
  const auto j = nlohmann::json::parse(findings_json(findings));
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["faults"], 1);
  EXPECT_EQ(j["warnings"], 1);
  ASSERT_EQ(j["findings"].size(), 3u);
  EXPECT_EQ(j["findings"][1]["status"], "fault");
  EXPECT_EQ(j["findings"][1]["fix"], "mv state.db state.db.corrupt");
  EXPECT_FALSE(j["findings"][0].contains("fix")) << "an ok finding has nothing to do";
}

TEST(DoctorState, NoStateFolderYetIsAWarningThatNoHookHasRun) {
  DoctorBench b;
  const auto f = check(b.in, {Area::State});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, Status::Warning);
  EXPECT_NE(f[0].message.find("no hook has run"), std::string::npos) << f[0].message;
}

TEST(DoctorState, AHealthyDatabaseIsOkAndADatabaseOpenToOthersIsAFaultWithItsChmod) {
  DoctorBench b;
  const fs::path db = b.state_db();
  auto f = check(b.in, {Area::State});
  ASSERT_NE(find(f, "state", Status::Ok), nullptr);
  EXPECT_EQ(find(f, "state", Status::Fault), nullptr);
  ASSERT_EQ(::chmod(db.c_str(), 0644), 0);
  f = check(b.in, {Area::State});
  const Finding* open = find(f, "state", Status::Fault);
  ASSERT_NE(open, nullptr);
  EXPECT_NE(open->message.find("is open to others (mode 0644, should be 0600)"), std::string::npos)
      << open->message;
  EXPECT_EQ(open->fix, "chmod 600 " + db.string());
}

TEST(DoctorState, ADamagedOrNewerDatabaseIsAFaultThatSaysWhatToDo) {
  {
    DoctorBench b;
    const fs::path db = b.state_db();
    {
      std::ofstream out(db, std::ios::binary | std::ios::trunc);
      out << std::string(8192, 'x');
    }
    ::chmod(db.c_str(), 0600);
    const auto f = check(b.in, {Area::State});
    const Finding* bad = find(f, "state", Status::Fault);
    ASSERT_NE(bad, nullptr);
    EXPECT_NE(bad->message.find(db.string() + " cannot be read"), std::string::npos)
        << bad->message;
    EXPECT_EQ(bad->fix, "mv " + db.string() + " " + db.string() +
                            ".corrupt (the next hook starts a new one)");
  }
  {
    DoctorBench b;
    const fs::path db = b.state_db();
    {
      // A newer ctxkit's schema: user_version is the big-endian word at offset 60.
      std::fstream io(db, std::ios::binary | std::ios::in | std::ios::out);
      io.seekp(60);
      const char v[4] = {0, 0, 0, 99};
      io.write(v, 4);
    }
    const auto f = check(b.in, {Area::State});
    const Finding* newer = find(f, "state", Status::Fault);
    ASSERT_NE(newer, nullptr);
    EXPECT_NE(newer->message.find("has schema version 99, newer than this ctxkit's"),
              std::string::npos)
        << newer->message;
    EXPECT_EQ(newer->fix, "install the newer ctxkit again");
  }
}

TEST(DoctorInstall, UnreadableSettingsAreAFaultAndMissingOnesMeanNothingIsRegistered) {
  DoctorBench b;
  auto f = check(b.in, {Area::Install});
  const Finding* none = find(f, "install", Status::Fault);
  ASSERT_NE(none, nullptr);
  EXPECT_NE(none->message.find("ctxkit is not registered"), std::string::npos) << none->message;

  fs::create_directories(b.in.settings_path.parent_path());
  std::ofstream(b.in.settings_path) << "{\"hooks\": [";
  f = check(b.in, {Area::Install});
  ASSERT_EQ(f.size(), 1u) << "nothing else is checked against a file that does not read";
  EXPECT_EQ(f[0].status, Status::Fault);
  EXPECT_NE(f[0].message.find(b.in.settings_path.string() + " is not valid JSON"),
            std::string::npos)
      << f[0].message;
  EXPECT_EQ(f[0].fix, "fix the file (Claude Code ignores it as it is)");
}

TEST(DoctorPrograms, AProgramNotInstalledIsAFaultNamingWhereItWasLookedFor) {
  DoctorBench b;
  const auto f = check(b.in, {Area::Programs});
  ASSERT_EQ(f.size(), 16u) << "one fault for each program of an install";
  EXPECT_EQ(f[0].status, Status::Fault);
  EXPECT_EQ(f[0].message,
            "ctx-remind is not installed (not in " + b.in.bin_dir.string() + " nor on PATH)");
}

TEST(DoctorConfig, EachWarningOfTheConfigurationIsOneFinding) {
  DoctorBench b;
  auto f = check(b.in, {Area::Config});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, Status::Ok);
  EXPECT_EQ(f[0].message, "no configuration file: defaults");
  b.in.cfg.warnings = {"unknown key a", "unknown key b"};
  b.in.cfg.errors = {"bad value c"};
  f = check(b.in, {Area::Config});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(verdict(f).warnings, 2);
  EXPECT_EQ(verdict(f).faults, 1);
  EXPECT_EQ(f[2].fix, "fix the value (the default is used meanwhile)");
}

}  // namespace
}  // namespace ctxkit::doctor
