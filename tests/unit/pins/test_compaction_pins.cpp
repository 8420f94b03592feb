// The pins around one compaction, as use cases: the summarizer's instructions, the check against
// the summary and its record, and the one prompt that re-states what the summary left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "pins/compaction_pins.hpp"
#include "pins/pin_scope.hpp"
#include "store/state_access.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::pins {
namespace {
namespace fs = std::filesystem;

struct PinHome {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Config cfg = core::load_config(env, {});
  core::Locations loc = cfg.locations(env);
  std::optional<store::StateStore> store;
  PinScope scope;
  explicit PinHome(const std::string& session = "0f5c3a4e-1111-4222-8333-944445555666") {
    std::string problem;
    auto s = store::open_state(loc, cfg, problem);
    if (!s) throw std::runtime_error("opening the state store: " + problem);
    store.emplace(std::move(*s));
    auto sc = resolve_pin_scope(*store, session, "/home/me/proj");
    if (!sc) throw std::runtime_error("the pins' scope: " + sc.error().message);
    scope = *sc;
  }
  void pin(const std::string& text, bool project = false) {
    ASSERT_TRUE(add_pin(*store, scope, text, project));
  }
};

TEST(PinScope, AnUnrecordedSessionIsItsOwnLineInTheFoldersProject) {
  PinHome h("S9");
  EXPECT_EQ(h.scope.line_id, "S9");
  EXPECT_EQ(h.scope.project, "-home-me-proj");
  EXPECT_FALSE(h.scope.recorded);
  h.pin("the API port is 8123");
  h.pin("deploys on friday", /*project=*/true);
  auto list = list_pins(*h.store, h.scope);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->total, 2);
  ASSERT_EQ(list->pins.size(), 2u);
  EXPECT_EQ(list->pins[0].scope_kind, "line");
  EXPECT_EQ(list->pins[1].scope_kind, "project");
  const auto view = pin_view_of(h.scope, *list);
  EXPECT_EQ(view.texts, (std::vector<std::string>{"the API port is 8123", "deploys on friday"}));
  EXPECT_EQ(view.project, "-home-me-proj");
}

TEST(PinScope, AddingWithoutALineOrProjectIsAnError) {
  PinHome h("");
  h.scope.project.clear();
  auto line = add_pin(*h.store, h.scope, "a fact", false);
  ASSERT_FALSE(line);
  EXPECT_NE(line.error().message.find("no session"), std::string::npos);
  auto project = add_pin(*h.store, h.scope, "a fact", true);
  ASSERT_FALSE(project);
  EXPECT_NE(project.error().message.find("no project"), std::string::npos);
}

TEST(CompactionPins, TheSummarizerIsToldThePinsTheFocusDoesNotNameAlready) {
  store::PinView view;
  view.texts = {"the API port is 8123", "deploys on friday"};
  view.total = 2;
  const auto all = summarizer_instructions(view, "");
  EXPECT_NE(all.find("the API port is 8123"), std::string::npos) << all;
  EXPECT_NE(all.find("deploys on friday"), std::string::npos) << all;
  const auto rest = summarizer_instructions(view, "Keep: the API port is 8123");
  EXPECT_EQ(rest.find("the API port is 8123"), std::string::npos) << rest;
  EXPECT_NE(rest.find("deploys on friday"), std::string::npos) << rest;
  EXPECT_EQ(summarizer_instructions(view, "the API port is 8123 and deploys on friday"), "");
  EXPECT_EQ(summarizer_instructions(store::PinView{}, ""), "");
}

TEST(CompactionPins, TheCheckRecordsWhatWasKeptAndOnePromptRestoresTheRest) {
  PinHome h;
  h.pin("the API port is 8123");
  h.pin("deploys on friday");
  h.pin("the schema is version 5");
  EXPECT_EQ(check_after_compaction(*h.store, h.loc, h.scope,
                                   "We use the API port is 8123. The schema is version 5.", "auto"),
            "");
  auto check = h.store->last_pin_check(h.scope.session_id);
  ASSERT_TRUE(check && *check);
  EXPECT_EQ((*check)->trigger, "auto");
  EXPECT_EQ((*check)->total, 3);
  EXPECT_EQ((*check)->kept, 2);
  EXPECT_EQ((*check)->restored, 1);
  const auto detail = nlohmann::json::parse((*check)->detail);
  ASSERT_EQ(detail.size(), 3u);
  EXPECT_FALSE(detail[1]["kept"].get<bool>());

  std::string note;
  auto text = take_pins_to_restore(h.loc, h.scope.session_id, note);
  ASSERT_TRUE(text) << note;
  EXPECT_NE(text->find("deploys on friday"), std::string::npos) << *text;
  EXPECT_EQ(text->find("the API port is 8123"), std::string::npos) << *text;
  // Once: the next prompt finds nothing to restore.
  EXPECT_FALSE(take_pins_to_restore(h.loc, h.scope.session_id, note));
  EXPECT_EQ(note, "");
}

TEST(CompactionPins, AllKeptRecordsTheCheckAndLeavesNothingToRestore) {
  PinHome h;
  h.pin("the API port is 8123");
  EXPECT_EQ(check_after_compaction(*h.store, h.loc, h.scope, "the API port is 8123", ""), "");
  auto check = h.store->last_pin_check(h.scope.session_id);
  ASSERT_TRUE(check && *check);
  EXPECT_EQ((*check)->trigger, "unknown");
  EXPECT_EQ((*check)->kept, 1);
  EXPECT_EQ((*check)->restored, 0);
  std::string note;
  EXPECT_FALSE(take_pins_to_restore(h.loc, h.scope.session_id, note));
  EXPECT_EQ(note, "");
}

TEST(CompactionPins, ASessionIdThatIsNoFileNameRestoresNothingAndWritesNoMarker) {
  PinHome h("../escape");
  h.pin("the API port is 8123");
  EXPECT_EQ(check_after_compaction(*h.store, h.loc, h.scope, "nothing kept", "manual"), "");
  auto check = h.store->last_pin_check("../escape");
  ASSERT_TRUE(check && *check);
  EXPECT_EQ((*check)->restored, 0);
  EXPECT_FALSE(fs::exists(h.loc.state_dir / "escape.restore"));
  // A marker planted where that id would lead is not taken either.
  std::filesystem::create_directories(h.loc.state_dir / "pins");
  std::ofstream(h.loc.state_dir / "escape.restore") << "1\nplanted";
  ASSERT_TRUE(fs::exists(h.loc.state_dir / "escape.restore")) << h.loc.state_dir;
  std::string note;
  EXPECT_FALSE(take_pins_to_restore(h.loc, "../escape", note));
  EXPECT_TRUE(fs::exists(h.loc.state_dir / "escape.restore"));
  EXPECT_EQ(note, "");
}

}  // namespace
}  // namespace ctxkit::pins
