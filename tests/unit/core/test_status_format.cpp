#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/status_format.hpp"

namespace ctxkit::core {
namespace {

StatusValues sample() {
  StatusValues v;
  v[static_cast<size_t>(StatusField::Percent)] = "42";
  v[static_cast<size_t>(StatusField::Tokens)] = "70k";
  v[static_cast<size_t>(StatusField::Usable)] = "167k";
  v[static_cast<size_t>(StatusField::Window)] = "200k";
  v[static_cast<size_t>(StatusField::Tier)] = "ok";
  v[static_cast<size_t>(StatusField::Model)] = "Opus 4.8";
  v[static_cast<size_t>(StatusField::Cost)] = "$0.14";
  return v;
}

TEST(StatusFormat, RendersEveryFieldBetweenLiterals) {
  auto p =
      parse_status_format("{percent}% · {tokens}/{usable} of {window} · {tier} · {model} · {cost}");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(render_status_format(*p, sample()), "42% · 70k/167k of 200k · ok · Opus 4.8 · $0.14");
}

TEST(StatusFormat, DoubledBracesAreLiteralBraces) {
  auto p = parse_status_format("{{{percent}}} }}x{{");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(render_status_format(*p, sample()), "{42} }x{");
  EXPECT_EQ(*p, (std::vector<StatusPiece>{
                    {"{", std::nullopt}, {"", StatusField::Percent}, {"} }x{", std::nullopt}}));
}

TEST(StatusFormat, TheFieldListIsTheOneTheErrorNames) {
  auto p = parse_status_format("{percent} {cost_usd}");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message,
            "unknown field '{cost_usd}' (known: percent, tokens, usable, window, tier, model, "
            "cost, compact, 5h, 7d, cache, compactions, reclaimed, capped, pins)");
  EXPECT_EQ(parse_status_format("{percent").error().message,
            "a '{' without its '}' at character 1 (write '{{' for a brace)");
  EXPECT_EQ(parse_status_format("a}").error().message,
            "a '}' without its '{' at character 2 (write '}}' for a brace)");
  EXPECT_EQ(parse_status_format("{}").error().message,
            "unknown field '{}' (known: percent, tokens, usable, window, tier, model, cost, "
            "compact, 5h, 7d, cache, compactions, reclaimed, capped, pins)");
}

// A field's value comes from the client: what a terminal would act on becomes visible text.
TEST(StatusFormat, AFieldsControlCharactersAndBytesThatAreNotUtf8BecomeVisible) {
  auto p = parse_status_format("[{model}]");
  ASSERT_TRUE(p) << p.error().message;
  StatusValues v = sample();
  v[static_cast<size_t>(StatusField::Model)] =
      "a\x1b]0;t\x07\x1b[2J\r\nb\x7f\xc2\x9b"
      "c\x9b\xff"
      "d\xc2\xa0é";
  EXPECT_EQ(render_status_format(*p, v),
            "[a\\x1b]0;t\\x07\\x1b[2J\\r\\nb\\x7f\\u009bc\\x9b\\xffd\xc2\xa0é]");
  v[static_cast<size_t>(StatusField::Model)] = std::string(300, 'm');
  EXPECT_EQ(render_status_format(*p, v), "[" + std::string(kMaxStatusFieldBytes, 'm') + "…]");
}

TEST(StatusFormat, PlainTextAndEmptyFormatsParse) {
  auto p = parse_status_format("ctx");
  ASSERT_TRUE(p);
  EXPECT_EQ(render_status_format(*p, sample()), "ctx");
  auto e = parse_status_format("");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->empty());
}

TEST(StatusConfig, AFormatWithAnUnknownFieldIsAWarningAndKeepsTheDefault) {
  Config c;
  apply_toml_text(c, "[status]\nformat = \"{percent}% {bogus}\"\n", "u.toml");
  EXPECT_EQ(c.status.format, "");
  EXPECT_TRUE(c.errors.empty());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "u.toml:2:10: status.format: unknown field '{bogus}' (known: percent, tokens, usable, "
            "window, "
            "tier, model, cost, compact, 5h, 7d, cache, compactions, reclaimed, capped, pins); the "
            "default line is "
            "kept");
  Config good;
  apply_toml_text(good, "[status]\nformat = \"{percent}%\"\ntimeout_ms = 250\n", "u.toml");
  EXPECT_EQ(good.status.format, "{percent}%");
  EXPECT_EQ(good.status.timeout_ms, 250);
  EXPECT_TRUE(good.warnings.empty());
}

TEST(StatusConfig, TheWrappedCommandComesOnlyFromTheUsersFile) {
  Config c;
  apply_toml_text(c, "[status]\ncommand = \"evil --steal\"\n", "/p/.work.toml",
                  ConfigLayer::Project);
  EXPECT_EQ(c.status.command, "");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("'status.command' is ignored in a project file"), std::string::npos)
      << c.warnings[0];
  Config u;
  apply_toml_text(u, "[status]\ncommand = \"ccstatusline\"\n", "config.toml", ConfigLayer::User);
  EXPECT_EQ(u.status.command, "ccstatusline");
  EXPECT_EQ(u.status.timeout_ms, 1000);
}

TEST(StatusConfig, ABadFormatFromTheEnvironmentIsAWarningToo) {
  util::Env env;
  env.set("HOME", "/nonexistent-home");
  env.set("CTXKIT_STATUS_FORMAT", "{nope}");
  Config c = load_config(env, {});
  EXPECT_EQ(c.status.format, "");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0].rfind("CTXKIT_STATUS_FORMAT: unknown field '{nope}'", 0), 0u)
      << c.warnings[0];
  EXPECT_TRUE(c.errors.empty());
}

}  // namespace
}  // namespace ctxkit::core
