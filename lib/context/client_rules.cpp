#include "context/client_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "claude/install_check.hpp"
#include "util/json_io.hpp"

namespace ctxkit::context {

namespace {
using json = nlohmann::json;

// share/client-rules.json as constant data (cmake/ClientRulesTable.cmake writes kBuiltInClients at
// configure time): a hook reads the rules without parsing a JSON document at every start.
struct Field {
  bool given = false;
  int64_t number = 0;     // a number, or a boolean as 0 or 1
  std::string_view text;  // a string
};
struct BuiltInModel {
  Field id, window, max_output, native_1m, can_1m, auto_compact_window, auto_compact_window_1m;
};
struct BuiltInClient {
  std::string_view version;
  // reply_reserve_cap, summary_buffer, blocking_buffer, min_auto_compact_window,
  // max_auto_compact_window, model_settings, server_windows
  Field numbers[7];
  bool has_unknown = false;
  BuiltInModel unknown;
  const BuiltInModel* models = nullptr;
  size_t model_count = 0;
};
#include "client_rules_table.inc"

// A "window_default" as parse_model reads it: a size, "auto" or "window"; absent: unchanged.
void apply_default(const Field& f, std::optional<int64_t>& size, bool& is_auto) {
  if (!f.given) return;
  if (f.text == "auto") {
    is_auto = true;
    size.reset();
  } else {
    is_auto = false;
    size = f.text == "window" ? 1'000'000'000'000 : f.number;
  }
}

// The same rule parse_model makes of the same fields.
ModelRule built_in_model(const BuiltInModel& m, const ModelRule& base) {
  ModelRule r = base;
  if (m.id.given) r.id = std::string(m.id.text);
  if (m.window.given) r.window = m.window.number;
  if (m.max_output.given) r.max_output = m.max_output.number;
  if (m.native_1m.given) r.native_1m = m.native_1m.number != 0;
  if (m.can_1m.given) r.can_1m = m.can_1m.number != 0;
  apply_default(m.auto_compact_window, r.default_window, r.default_is_auto);
  r.default_window_1m = r.default_window;
  r.default_1m_is_auto = r.default_is_auto;
  apply_default(m.auto_compact_window_1m, r.default_window_1m, r.default_1m_is_auto);
  if (r.native_1m) r.window = 1'000'000;
  return r;
}

bool older(const ClientRules& x, const ClientRules& y) {
  return claude::compare_versions(x.version, y.version) < 0;
}

Result<int64_t> tokens_at(const json& j, const char* key, int64_t fallback,
                          std::string_view where) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    return fail(fmt::format("{}: \"{}\" is not a positive whole number", where, key),
                Error::Kind::Invalid);
  return it->get<int64_t>();
}

// "window_default": a size or "auto"; absent: the same as `fallback`.
Result<void> default_at(const json& j, const char* key, std::optional<int64_t>& size, bool& is_auto,
                        std::string_view where) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string() && it->get<std::string>() == "window") {
    is_auto = false;
    size = 1'000'000'000'000;  // the model's own window (held to it below)
    return {};
  }
  if (it->is_string() && it->get<std::string>() == "auto") {
    is_auto = true;
    size.reset();
    return {};
  }
  if (it->is_number_integer() && it->get<int64_t>() > 0) {
    is_auto = false;
    size = it->get<int64_t>();
    return {};
  }
  return fail(fmt::format("{}: \"{}\" is neither a positive size nor \"auto\"", where, key),
              Error::Kind::Invalid);
}

Result<ModelRule> parse_model(const json& m, std::string_view where, const ModelRule& base) {
  if (!m.is_object()) return fail(fmt::format("{}: not an object", where), Error::Kind::Invalid);
  ModelRule r = base;
  if (auto id = m.find("id"); id != m.end()) {
    if (!id->is_string() || id->get<std::string>().empty())
      return fail(fmt::format("{}: \"id\" is not a name", where), Error::Kind::Invalid);
    r.id = id->get<std::string>();
  }
  auto window = tokens_at(m, "window", r.window, where);
  if (!window) return std::unexpected(window.error());
  r.window = *window;
  auto out = tokens_at(m, "max_output", r.max_output, where);
  if (!out) return std::unexpected(out.error());
  r.max_output = *out;
  if (auto n = m.find("native_1m"); n != m.end()) r.native_1m = n->is_boolean() && n->get<bool>();
  if (auto c = m.find("can_1m"); c != m.end()) r.can_1m = c->is_boolean() && c->get<bool>();
  CTXKIT_TRY(default_at(m, "auto_compact_window", r.default_window, r.default_is_auto, where));
  r.default_window_1m = r.default_window;
  r.default_1m_is_auto = r.default_is_auto;
  if (auto d =
          default_at(m, "auto_compact_window_1m", r.default_window_1m, r.default_1m_is_auto, where);
      !d)
    return std::unexpected(d.error());
  if (r.native_1m) r.window = 1'000'000;
  return r;
}
}  // namespace

Result<std::vector<ClientRules>> parse_client_rules(std::string_view text) {
  const json doc = util::parse_json(text);
  if (doc.is_discarded() || !doc.is_object())
    return fail("client rules: not a JSON object", Error::Kind::Invalid);
  auto clients = doc.find("clients");
  if (clients == doc.end() || !clients->is_array() || clients->empty())
    return fail("client rules: no \"clients\" list", Error::Kind::Invalid);
  std::vector<ClientRules> out;
  for (const auto& c : *clients) {
    ClientRules r;
    if (!c.is_object() || !c.contains("version") || !c["version"].is_string())
      return fail("client rules: a client without a \"version\"", Error::Kind::Invalid);
    r.version = c["version"].get<std::string>();
    const std::string where = "client rules " + r.version;
    for (auto [key, field] : {std::pair{"reply_reserve_cap", &r.reply_reserve_cap},
                              std::pair{"summary_buffer", &r.summary_buffer},
                              std::pair{"blocking_buffer", &r.blocking_buffer},
                              std::pair{"min_auto_compact_window", &r.min_auto_compact_window},
                              std::pair{"max_auto_compact_window", &r.max_auto_compact_window}}) {
      auto v = tokens_at(c, key, *field, where);
      if (!v) return std::unexpected(v.error());
      *field = *v;
    }
    if (auto f = c.find("model_settings"); f != c.end())
      r.model_settings = f->is_boolean() && f->get<bool>();
    if (auto f = c.find("server_windows"); f != c.end())
      r.server_windows = f->is_boolean() && f->get<bool>();
    ModelRule base;
    if (auto u = c.find("unknown_model"); u != c.end()) {
      auto m = parse_model(*u, where + " unknown_model", base);
      if (!m) return std::unexpected(m.error());
      r.unknown = *m;
    }
    auto models = c.find("models");
    if (models == c.end() || !models->is_array())
      return fail(where + ": no \"models\" list", Error::Kind::Invalid);
    for (const auto& m : *models) {
      auto rule = parse_model(m, where + " model", ModelRule{});
      if (!rule) return std::unexpected(rule.error());
      if (rule->id.empty())
        return fail(where + ": a model without an \"id\"", Error::Kind::Invalid);
      r.models.push_back(std::move(*rule));
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), older);
  return out;
}

const std::vector<ClientRules>& recorded_client_rules() {
  static const std::vector<ClientRules> rules = [] {
    std::vector<ClientRules> out;
    for (const BuiltInClient& c : kBuiltInClients) {
      ClientRules r;
      r.version = std::string(c.version);
      int64_t* sizes[] = {&r.reply_reserve_cap, &r.summary_buffer, &r.blocking_buffer,
                          &r.min_auto_compact_window, &r.max_auto_compact_window};
      for (size_t k = 0; k < std::size(sizes); ++k)
        if (c.numbers[k].given) *sizes[k] = c.numbers[k].number;
      if (c.numbers[5].given) r.model_settings = c.numbers[5].number != 0;
      if (c.numbers[6].given) r.server_windows = c.numbers[6].number != 0;
      if (c.has_unknown) r.unknown = built_in_model(c.unknown, ModelRule{});
      r.models.reserve(c.model_count);
      for (size_t m = 0; m < c.model_count; ++m)
        r.models.push_back(built_in_model(c.models[m], ModelRule{}));
      out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(), older);
    return out;
  }();
  return rules;
}

RulesChoice rules_for(std::string_view client_version) {
  const auto& all = recorded_client_rules();
  RulesChoice choice;
  choice.rules = &all.back();
  const bool known = !client_version.empty() &&
                     std::all_of(client_version.begin(), client_version.end(),
                                 [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!known) {
    choice.newer_than_recorded = true;
    return choice;
  }
  if (claude::compare_versions(client_version, all.back().version) > 0) {
    choice.newer_than_recorded = true;
    return choice;
  }
  // The newest recorded release not newer than this one (an older client than the oldest
  // recorded gets the oldest).
  choice.rules = &all.front();
  for (const auto& r : all) {
    if (claude::compare_versions(r.version, client_version) <= 0) choice.rules = &r;
  }
  choice.exact = claude::compare_versions(choice.rules->version, client_version) == 0;
  return choice;
}

const ModelRule* find_model(const ClientRules& rules, std::string_view model) {
  if (size_t b = model.find('['); b != std::string_view::npos) model = model.substr(0, b);
  // A provider's form ("us.anthropic.claude-sonnet-4-5-20250929-v1:0") names the same model.
  if (size_t c = model.find("claude-"); c != std::string_view::npos) model = model.substr(c);
  const ModelRule* best = nullptr;
  for (const auto& m : rules.models) {
    if (model.size() < m.id.size() || model.compare(0, m.id.size(), m.id) != 0) continue;
    // "claude-opus-4-1" must not take "claude-opus-4-10": the id ends at the name's end or at a
    // date ("-20250805") or another suffix after a dash.
    if (model.size() > m.id.size()) {
      const char next = model[m.id.size()];
      if (next != '-' && next != '@' && next != ':' && next != '.') continue;
      if (next == '-') {
        // "-1" after "claude-opus-4" is another minor version; "-20250514" is a date.
        std::string_view rest = model.substr(m.id.size() + 1);
        rest = rest.substr(0, rest.find('-'));
        const bool digits = !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
        if (digits && rest.size() < 8) continue;
      }
    }
    if (!best || m.id.size() > best->id.size()) best = &m;
  }
  return best;
}

}  // namespace ctxkit::context
