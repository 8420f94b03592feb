// The views of a session's pins that PreCompact reads without the database: written only from
// the store, used only while current.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "store/pin_views.hpp"
#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::store {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

PinView sample() {
  PinView v;
  v.texts = {"the API listens on 8123", std::string("a\nb\0c", 5), "", "ctxkit pin view 1"};
  v.total = 7;
  v.recorded = false;
  v.project = "-proj";
  return v;
}

TEST(PinViews, EncodedViewDecodesToTheSameOnlyForItsGenerationAndDatabase) {
  const PinView v = sample();
  const std::string text = encode_pin_view(v, "0123456789abcdef", "8:42");
  auto back = decode_pin_view(text, "0123456789abcdef", "8:42");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->texts, v.texts);
  EXPECT_EQ(back->total, 7);
  EXPECT_FALSE(back->recorded);
  EXPECT_EQ(back->project, "-proj");
  EXPECT_FALSE(decode_pin_view(text, "0123456789abcdee", "8:42"));  // another generation
  EXPECT_FALSE(decode_pin_view(text, "0123456789abcdef", "8:43"));  // another database file
  EXPECT_FALSE(decode_pin_view(text, "", "8:42"));
  EXPECT_FALSE(decode_pin_view(text, "0123456789abcdef", ""));
}

TEST(PinViews, EveryCutOrChangedByteOfAViewIsRefusedOrDecodesToWhatWasWritten) {
  const PinView v = sample();
  const std::string text = encode_pin_view(v, "0123456789abcdef", "8:42");
  for (size_t n = 0; n < text.size(); ++n)
    EXPECT_FALSE(decode_pin_view(text.substr(0, n), "0123456789abcdef", "8:42")) << n;
  EXPECT_FALSE(decode_pin_view(text + "x", "0123456789abcdef", "8:42"));
  for (size_t at = 0; at < text.size(); ++at) {
    std::string t = text;
    t[at] = static_cast<char>(t[at] ^ 0x5a);
    auto d = decode_pin_view(t, "0123456789abcdef", "8:42");
    if (d) {  // a changed byte inside a pin's text: the text changed, nothing else
      EXPECT_EQ(d->texts.size(), v.texts.size()) << at;
      EXPECT_EQ(d->total, v.total) << at;
    }
  }
}

struct Store {
  test::TempDir tmp;
  fs::path db = tmp / "state/ctxkit/state.db";
  StateStore s = *StateStore::open(db, 1000);
  PinViews views{db, 200ms};

  Result<void> refresh(const std::string& session, const std::string& line) {
    return views.refresh(session, [&]() -> Result<PinView> {
      auto rows = s.pins(line, "", 100);
      if (!rows) return std::unexpected(rows.error());
      PinView v;
      for (const auto& r : *rows) v.texts.push_back(r.text);
      v.total = static_cast<int64_t>(rows->size());
      return v;
    });
  }
  void add(const std::string& line, const std::string& text) {
    PinRow p;
    p.scope_kind = "line";
    p.scope = line;
    p.text = text;
    ASSERT_TRUE(s.add_pin(p, 100));
  }
};

TEST(PinViews, AViewIsCurrentUntilAPinIsAddedOrRemovedOrASessionRecorded) {
  Store st;
  st.add("S1", "first");
  EXPECT_FALSE(st.views.read("S1", ""));  // none written yet
  ASSERT_TRUE(st.refresh("S1", "S1"));
  auto v = st.views.read("S1", "");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->texts, std::vector<std::string>{"first"});
  EXPECT_TRUE(v->recorded);

  st.add("S9", "a pin of another line");  // any change makes every view stale
  EXPECT_FALSE(st.views.read("S1", ""));
  ASSERT_TRUE(st.refresh("S1", "S1"));
  ASSERT_TRUE(st.views.read("S1", ""));

  ASSERT_TRUE(st.s.remove_pin(1, "S1", ""));
  EXPECT_FALSE(st.views.read("S1", ""));
  ASSERT_TRUE(st.refresh("S1", "S1"));
  ASSERT_TRUE(st.views.read("S1", ""));
  EXPECT_TRUE(st.views.read("S1", "")->texts.empty());

  SessionRecord r;
  r.session_id = "S2";
  ASSERT_TRUE(st.s.record_session_seen(r));  // a session recorded for the first time
  EXPECT_FALSE(st.views.read("S1", ""));
  ASSERT_TRUE(st.refresh("S1", "S1"));
  ASSERT_TRUE(st.s.record_session_seen(r));  // known already: nothing changes
  EXPECT_TRUE(st.views.read("S1", ""));

  SessionRecord child;
  child.session_id = "S3";
  ASSERT_TRUE(st.s.record_derivation(r, child, "rollover", std::nullopt, std::nullopt, "now"));
  EXPECT_FALSE(st.views.read("S1", ""));
}

TEST(PinViews, AnotherDatabaseFileInThePlaceOfTheOneReadMakesTheViewStale) {
  Store st;
  st.add("S1", "first");
  ASSERT_TRUE(st.refresh("S1", "S1"));
  ASSERT_TRUE(st.views.read("S1", ""));
  // As a quarantine of a corrupt store, or a restored backup, does: another file under the name.
  fs::copy_file(st.db, st.tmp / "copy.db");
  fs::rename(st.tmp / "copy.db", st.db);
  EXPECT_FALSE(st.views.read("S1", ""));
}

TEST(PinViews, AViewReadForAnUnrecordedSessionHoldsOnlyForTheSameProject) {
  Store st;
  ASSERT_TRUE(st.views.refresh("S1", []() -> Result<PinView> {
    PinView v;
    v.recorded = false;
    v.project = "-proj";
    v.texts = {"x"};
    v.total = 1;
    return v;
  }));
  EXPECT_TRUE(st.views.read("S1", "-proj"));
  EXPECT_FALSE(st.views.read("S1", "-other"));
}

TEST(PinViews, NoViewIsWrittenWhileAWriterHoldsTheLockAndAnIdThatCannotNameAFileIsSkipped) {
  Store st;
  st.add("S1", "first");
  fs::create_directories(st.db.parent_path() / "pins");
  auto held = util::FileLock::acquire_within(st.db.parent_path() / "pins/views.lock",
                                             util::FileLock::Mode::Exclusive, 0ms);
  ASSERT_TRUE(held && held->has_value());
  bool read_called = false;
  auto r = st.views.refresh("S1", [&]() -> Result<PinView> {
    read_called = true;
    return PinView{};
  });
  EXPECT_TRUE(r);
  EXPECT_FALSE(read_called);  // the caller reads the store itself
  EXPECT_FALSE(st.views.read("S1", ""));
  held->reset();
  ASSERT_TRUE(st.refresh("../S1", "S1"));
  EXPECT_FALSE(fs::exists(st.db.parent_path() / "S1.view"));
  EXPECT_FALSE(st.views.read("../S1", ""));
}

// A link in place of a view, of the generation or of the lock is never followed: no view is used,
// and what the link names is left as it was.
TEST(PinViews, LinksInPlaceOfItsFilesAreNotFollowed) {
  Store st;
  st.add("S1", "first");
  ASSERT_TRUE(st.refresh("S1", "S1"));
  const fs::path pins = st.db.parent_path() / "pins";
  const fs::path target = st.tmp / "target";
  { std::ofstream(target) << "keep"; }
  fs::rename(pins / "S1.view", st.tmp / "real.view");
  fs::create_symlink(st.tmp / "real.view", pins / "S1.view");
  EXPECT_FALSE(st.views.read("S1", ""));
  fs::remove(pins / "S1.view");
  fs::rename(st.tmp / "real.view", pins / "S1.view");
  ASSERT_TRUE(st.views.read("S1", ""));

  fs::remove(pins / "views.gen");
  fs::create_symlink(target, pins / "views.gen");
  EXPECT_FALSE(st.views.read("S1", ""));
  st.add("S1", "second");  // the writer removes the link, and writes no generation through it
  std::ifstream in(target);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "keep");

  fs::remove(pins / "views.lock");
  fs::create_symlink(target, pins / "views.lock");
  EXPECT_FALSE(st.refresh("S1", "S1"));  // refused, with its reason
  st.add("S1", "third");                 // the writer goes on without the lock
  EXPECT_FALSE(st.views.read("S1", ""));
  EXPECT_TRUE(fs::is_symlink(pins / "views.lock"));
}

}  // namespace
}  // namespace ctxkit::store
