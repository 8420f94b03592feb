// Merging ctxkit's hooks into a settings.json of any shape: a second merge adds nothing, and
// removing what the merge created leaves a valid document.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "claude/settings_merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto settings = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (settings.is_discarded()) return 0;
  auto plan = ctxkit::claude::default_plan("/usr/local/bin");
  ctxkit::claude::SettingsReport first;
  if (!ctxkit::claude::merge_settings(settings, plan, first).empty()) return 0;
  auto merged = settings;
  ctxkit::claude::SettingsReport second;
  if (!ctxkit::claude::merge_settings(settings, plan, second).empty() || settings != merged ||
      second.changed)
    std::abort();
  ctxkit::claude::SettingsReport removed;
  (void)ctxkit::claude::remove_settings(settings, plan, first.created, removed);
  (void)settings.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return 0;
}
