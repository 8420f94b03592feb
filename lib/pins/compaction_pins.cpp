#include "pins/compaction_pins.hpp"

#include <fmt/core.h>
#include <stdio.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "context/pins.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::pins {
namespace fs = std::filesystem;

namespace {
// The file whose presence tells the next UserPromptSubmit hook that a compaction left pins out:
// that hook then reads it, and on every other prompt only looks for this file.
fs::path restore_marker(const core::Locations& loc, const std::string& session_id) {
  return loc.state_dir / "pins" / (session_id + ".restore");
}
}  // namespace

std::string summarizer_instructions(const store::PinView& view,
                                    const std::string& custom_instructions) {
  std::vector<std::string> texts;
  for (const auto& pin : view.texts)
    if (custom_instructions.find(pin) == std::string::npos) texts.push_back(pin);
  const auto named = static_cast<int64_t>(view.texts.size() - texts.size());
  return context::precompact_instructions(texts, view.total - named, "");
}

std::string check_after_compaction(store::StateStore& store, const core::Locations& loc,
                                   const PinScope& scope, const std::string& summary_text,
                                   const std::string& trigger) {
  std::string note;
  auto list = list_pins_writing_view(store, loc, scope, note);
  if (!list) return list.error().message;
  if (list->pins.empty()) return note;
  const context::SummaryText summary(summary_text);
  nlohmann::json detail = nlohmann::json::array();
  std::vector<std::string> missing;
  for (const auto& pin : list->pins) {
    const bool k = summary.keeps(pin.text);
    if (!k) missing.push_back(pin.text);
    detail.push_back({{"id", pin.id}, {"text", pin.text}, {"kept", k}});
  }
  size_t shown = 0;
  const std::string text =
      missing.empty() ? std::string()
                      : context::render_pin_list(
                            "Pinned facts the last compaction's summary left out (re-stated by "
                            "ctxkit; they still hold):",
                            missing, static_cast<int64_t>(missing.size()),
                            "ctx-pin list shows every pin", &shown);
  const bool restoring = shown > 0 && store::PinViews::usable_id(scope.session_id);
  store::PinCheckRow row;
  row.session_id = scope.session_id;
  row.line_id = scope.line_id;
  row.at_ms = util::now_ms();
  row.trigger = trigger.empty() ? std::string("unknown") : trigger;
  row.total = static_cast<int64_t>(list->pins.size());
  row.kept = row.total - static_cast<int64_t>(missing.size());
  row.restored = restoring ? static_cast<int64_t>(shown) : 0;
  row.detail = util::dump_json(detail, -1, util::BadUtf8::replace);
  auto id = store.add_pin_check(row);
  if (!id) return id.error().message;
  if (!restoring) return note;
  const fs::path marker = restore_marker(loc, scope.session_id);
  if (auto d = util::make_private_dirs(marker.parent_path(), loc.state_dir); !d)
    return d.error().message;
  // Written whole under another name and renamed: the next prompt's hook takes it whole or not.
  if (auto w = util::write_file_atomic(marker, fmt::format("{}\n{}", *id, text), 0600,
                                       util::Durability::Flush);
      !w)
    return w.error().message;
  return note;
}

std::optional<std::string> take_pins_to_restore(const core::Locations& loc,
                                                const std::string& session_id, std::string& note) {
  if (!store::PinViews::usable_id(session_id)) return std::nullopt;
  // Renaming the marker away is what makes this the one prompt that restores them.
  const fs::path marker = restore_marker(loc, session_id);
  const fs::path taken = loc.state_dir / "pins" / (session_id + ".restored");
  if (::rename(marker.c_str(), taken.c_str()) != 0) return std::nullopt;  // the usual case
  util::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.follow_links = false;
  auto text = util::read_file(taken, limits);
  if (!text) {
    note = text.error().message;
    return std::nullopt;
  }
  const size_t nl = text->find('\n');
  if (nl == std::string::npos || nl + 1 >= text->size()) return std::nullopt;
  return text->substr(nl + 1);
}

}  // namespace ctxkit::pins
