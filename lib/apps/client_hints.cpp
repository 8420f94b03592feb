#include "apps/client_hints.hpp"

#include <sys/stat.h>

#include "util/fs.hpp"

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
