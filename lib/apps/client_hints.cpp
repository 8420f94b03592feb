#include "apps/client_hints.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>

#include "util/fs.hpp"
#include "util/text.hpp"

namespace ctxkit::apps {

claude::ServerHints server_hints(const util::Env& env, store::MeterStore* store,
                                 std::string& problem) {
  const std::filesystem::path file = claude::client_state_file(env);
  if (file.empty()) return {};
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const int64_t size = st.st_size;
  const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (store) {
    if (auto row = store->client_state(file.string());
        row && *row && (*row)->size == size && (*row)->mtime_ns == mtime_ns)
      return claude::hints_from_json((*row)->hints);
  }
  auto text = util::read_file(file);
  if (!text) {
    problem = text.error().message;
    return {};
  }
  claude::ServerHints hints = claude::parse_client_state(*text);
  if (store) {
    if (auto r =
            store->put_client_state(file.string(), {size, mtime_ns, claude::hints_to_json(hints)});
        !r)
      problem = r.error().message;
  }
  return hints;
}

}  // namespace ctxkit::apps

namespace ctxkit::apps {

namespace {
// Strings of the cache's text: tab, newline, carriage return, NUL and backslash escaped.
void put_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
}

std::optional<std::string> unescaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return std::nullopt;
    switch (s[i]) {
      case '\\':
        out += '\\';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

std::optional<int64_t> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t t = line.find('\t');
    out.push_back(line.substr(0, t));
    if (t == std::string_view::npos) return out;
    line.remove_prefix(t + 1);
  }
}

constexpr std::string_view kInputsVersion = "compaction-inputs 1";

// Each file's path and what stat says of it (device, inode, mode, size, modification and change
// times), or that it is not there.
int64_t inputs_signature(const std::vector<std::filesystem::path>& files) {
  util::Fnv1a f;
  auto add = [&f](const auto& v) { f.add(&v, sizeof v); };
  for (const auto& p : files) {
    const std::string& s = p.native();
    f.add(s.data(), s.size() + 1);
    struct stat st {};
    if (::stat(s.c_str(), &st) != 0) {
      const int e = errno;
      add(e);
      continue;
    }
    const int64_t fields[] = {static_cast<int64_t>(st.st_dev),
                              static_cast<int64_t>(st.st_ino),
                              static_cast<int64_t>(st.st_mode),
                              static_cast<int64_t>(st.st_size),
                              st.st_mtim.tv_sec,
                              st.st_mtim.tv_nsec,
                              st.st_ctim.tv_sec,
                              st.st_ctim.tv_nsec};
    add(fields);
  }
  return static_cast<int64_t>(f.value & 0x7fffffffffffffffull);
}
}  // namespace

std::string encode_compaction_inputs(const std::vector<context::SettingsFileReading>& files,
                                     const claude::ServerHints& server) {
  std::string out(kInputsVersion);
  out += '\n';
  for (const auto& f : files) {
    out += "f\t";
    put_escaped(out, f.path);
    out += '\n';
    if (f.window) out += fmt::format("w\t{}\n", *f.window);
    if (f.enabled) out += fmt::format("e\t{}\n", *f.enabled ? 1 : 0);
    if (f.tokens_reminder) {
      out += "r\t";
      put_escaped(out, *f.tokens_reminder);
      out += '\n';
    }
    for (const auto& [model, w] : f.models) {
      out += "m\t";
      put_escaped(out, model);
      out += fmt::format("\t{}\n", w);
    }
  }
  out += "s\n";
  if (server.auto_compact_enabled)
    out += fmt::format("se\t{}\n", *server.auto_compact_enabled ? 1 : 0);
  for (const auto& [model, w] : server.model_windows) {
    out += "sm\t";
    put_escaped(out, model);
    out += fmt::format("\t{}\n", w);
  }
  return out;
}

bool decode_compaction_inputs(std::string_view text,
                              std::vector<context::SettingsFileReading>& files,
                              claude::ServerHints& server) {
  files.clear();
  server = {};
  if (!text.starts_with(kInputsVersion) || text.size() <= kInputsVersion.size() ||
      text[kInputsVersion.size()] != '\n')
    return false;
  text.remove_prefix(kInputsVersion.size() + 1);
  bool in_server = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;  // every line ends with one
    const auto fields = split_tabs(text.substr(0, nl));
    text.remove_prefix(nl + 1);
    const std::string_view tag = fields[0];
    auto flag = [](std::string_view v) -> std::optional<bool> {
      if (v == "0") return false;
      if (v == "1") return true;
      return std::nullopt;
    };
    if (tag == "s" && fields.size() == 1 && !in_server) {
      in_server = true;
    } else if (tag == "f" && fields.size() == 2 && !in_server) {
      auto path = unescaped(fields[1]);
      if (!path) return false;
      files.push_back({});
      files.back().path = std::move(*path);
    } else if (tag == "w" && fields.size() == 2 && !in_server && !files.empty()) {
      auto n = whole_number(fields[1]);
      if (!n) return false;
      files.back().window = *n;
    } else if (tag == "e" && fields.size() == 2 && !in_server && !files.empty()) {
      auto b = flag(fields[1]);
      if (!b) return false;
      files.back().enabled = *b;
    } else if (tag == "r" && fields.size() == 2 && !in_server && !files.empty()) {
      auto r = unescaped(fields[1]);
      if (!r) return false;
      files.back().tokens_reminder = std::move(*r);
    } else if ((tag == "m" || tag == "sm") && fields.size() == 3 && (tag == "sm") == in_server &&
               (in_server || !files.empty())) {
      auto model = unescaped(fields[1]);
      auto n = whole_number(fields[2]);
      if (!model || !n) return false;
      (in_server ? server.model_windows : files.back().models)[std::move(*model)] = *n;
    } else if (tag == "se" && fields.size() == 2 && in_server) {
      auto b = flag(fields[1]);
      if (!b) return false;
      server.auto_compact_enabled = *b;
    } else {
      return false;
    }
  }
  return in_server;
}

context::CompactionSettings compaction_settings(const util::Env& env,
                                                const std::filesystem::path& project,
                                                store::MeterStore* store, std::string& problem) {
  const std::vector<std::filesystem::path> paths = context::client_settings_files(env, project);
  std::vector<context::SettingsFileReading> files;
  claude::ServerHints server;
  std::string key;
  int64_t signature = 0;
  // The settings files and the state file: the row's `size` holds how many.
  const auto inputs_count = static_cast<int64_t>(paths.size() + 1);
  if (store) {
    std::vector<std::filesystem::path> inputs = paths;
    inputs.push_back(claude::client_state_file(env));
    key = "settings";
    for (const auto& p : inputs) {
      key += '\n';
      key += p.native();
    }
    signature = inputs_signature(inputs);
    if (auto row = store->client_state(key);
        row && *row && (*row)->size == inputs_count && (*row)->mtime_ns == signature &&
        decode_compaction_inputs((*row)->hints, files, server) && files.size() == paths.size()) {
      context::CompactionSettings s = context::combine_compaction_settings(env, files);
      s.server = std::move(server);
      return s;
    }
  }
  files.clear();
  for (const auto& p : paths) files.push_back(context::read_settings_file(p));
  server = server_hints(env, store, problem);
  if (store) {
    if (auto r = store->put_client_state(
            key, {inputs_count, signature, encode_compaction_inputs(files, server)});
        !r && problem.empty())
      problem = r.error().message;
  }
  context::CompactionSettings s = context::combine_compaction_settings(env, files);
  s.server = std::move(server);
  return s;
}

}  // namespace ctxkit::apps
