#pragma once

// Test parameters over the recorded data: every recorded client version and model holding a part,
// as recorded and in each rewritten JSON layout.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::test {

struct Recorded {
  std::string set;                     // "claude-code-<version>/<model>"
  std::optional<JsonVariant> variant;  // nullopt: as recorded
};

inline std::vector<Recorded> recorded(const std::string& part) {
  std::vector<Recorded> out;
  for (const auto& set : fixture_sets(part)) {
    out.push_back({set, std::nullopt});
    for (auto v : all_json_variants()) out.push_back({set, v});
  }
  return out;
}

inline std::string recorded_name(const ::testing::TestParamInfo<Recorded>& info) {
  return fixture_set_name(info.param.set) + "_" +
         (info.param.variant ? variant_name(*info.param.variant) : "Recorded");
}

}  // namespace ctxkit::test
