// A TOML configuration layer (user file or project .work.toml).
#include <cstdint>
#include <string_view>

#include "core/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ctxkit::Config config;
  ctxkit::apply_toml_text(config, std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  (void)ctxkit::show_config(config);
  return 0;
}
