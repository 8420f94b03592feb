// A TOML configuration layer (user file or project .work.toml) over the built-in defaults.
#include <cstdint>
#include <string_view>

#include "core/config.hpp"
#include "util/env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Defaults with their origins, as every tool starts (no HOME: no user file is read).
  static const ctxkit::core::Config defaults = ctxkit::core::load_config(ctxkit::util::Env(), {});
  ctxkit::core::Config config = defaults;
  ctxkit::core::apply_toml_text(config, std::string_view(reinterpret_cast<const char*>(data), size),
                                "fuzz.toml");
  (void)ctxkit::core::show_config(config);
  return 0;
}
