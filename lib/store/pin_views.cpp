#include "store/pin_views.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string_view>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/unique_fd.hpp"

namespace ctxkit::store {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view kMagic = "ctxkit pin view 1\n";
constexpr size_t kGenerationChars = 16;
// A view holds at most the injected pins, each short: anything larger is not one of ours.
constexpr size_t kMaxViewBytes = 4u << 20;

std::string db_identity(const fs::path& db) {
  struct stat st {};
  if (::stat(db.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return fmt::format("{}:{}", static_cast<unsigned long long>(st.st_dev),
                     static_cast<unsigned long long>(st.st_ino));
}

// The generation as the file holds it: 16 hex digits, else empty (no file, a link, anything else).
std::string read_generation(const fs::path& path) {
  const util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return {};
  char buf[kGenerationChars + 1];
  struct stat st {};
  ssize_t n = -1;
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) n = ::pread(fd.get(), buf, sizeof buf, 0);
  if (n != static_cast<ssize_t>(kGenerationChars)) return {};
  std::string g(buf, kGenerationChars);
  return g.find_first_not_of("0123456789abcdef") == std::string::npos ? g : std::string();
}

// Reads "<word> <decimal>\n" at `at`.
bool read_number(std::string_view text, size_t& at, std::string_view word, uint64_t& out) {
  if (text.substr(at, word.size()) != word || at + word.size() >= text.size() ||
      text[at + word.size()] != ' ')
    return false;
  at += word.size() + 1;
  const size_t nl = text.find('\n', at);
  if (nl == std::string_view::npos) return false;
  const char* end = text.data() + nl;
  auto [p, ec] = std::from_chars(text.data() + at, end, out);
  if (ec != std::errc() || p != end) return false;
  at = nl + 1;
  return true;
}

// Reads "<decimal>\n<bytes>\n" at `at`.
bool read_block(std::string_view text, size_t& at, std::string_view word, std::string& out) {
  uint64_t n = 0;
  if (!read_number(text, at, word, n) || n > text.size() - at || at + n >= text.size() ||
      text[at + n] != '\n')
    return false;
  out.assign(text.substr(at, n));
  at += n + 1;
  return true;
}

void write_block(std::string& out, std::string_view word, std::string_view bytes) {
  out += fmt::format("{} {}\n", word, bytes.size());
  out.append(bytes);
  out += '\n';
}
}  // namespace

std::string encode_pin_view(const PinView& view, const std::string& generation,
                            const std::string& identity) {
  std::string out(kMagic);
  write_block(out, "generation", generation);
  write_block(out, "db", identity);
  out += view.recorded ? "recorded 1\n" : "recorded 0\n";
  write_block(out, "project", view.project);
  out += fmt::format("total {}\npins {}\n", view.total, view.texts.size());
  for (const auto& t : view.texts) write_block(out, "pin", t);
  out += "end\n";
  return out;
}

std::optional<PinView> decode_pin_view(const std::string& text, const std::string& generation,
                                       const std::string& identity) {
  const std::string_view t(text);
  if (t.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  size_t at = kMagic.size();
  std::string gen, id;
  PinView v;
  uint64_t total = 0, count = 0, recorded = 0;
  if (!read_block(t, at, "generation", gen) || gen != generation || generation.empty() ||
      !read_block(t, at, "db", id) || id != identity || identity.empty() ||
      !read_number(t, at, "recorded", recorded) || recorded > 1 ||
      !read_block(t, at, "project", v.project) || !read_number(t, at, "total", total) ||
      !read_number(t, at, "pins", count) || count > total || count > text.size())
    return std::nullopt;
  v.recorded = recorded == 1;
  v.total = static_cast<int64_t>(total);
  v.texts.resize(count);
  for (auto& s : v.texts)
    if (!read_block(t, at, "pin", s)) return std::nullopt;
  if (t.substr(at) != "end\n") return std::nullopt;
  return v;
}

PinViews::PinViews(const fs::path& db, std::chrono::milliseconds wait)
    : db_(db), dir_(db.parent_path() / "pins"), wait_(wait) {}

bool PinViews::usable_id(const std::string& id) {
  return !id.empty() && id.size() <= 128 &&
         id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") ==
             std::string::npos;
}

std::optional<PinView> PinViews::read(const std::string& session_id,
                                      const std::string& project) const {
  if (!usable_id(session_id)) return std::nullopt;
  const std::string generation = current_generation();
  if (generation.empty()) return std::nullopt;
  util::ReadLimits limits;
  limits.max_bytes = kMaxViewBytes;
  limits.follow_links = false;
  auto text = util::read_file(dir_ / (session_id + ".view"), limits);
  if (!text) return std::nullopt;
  auto view = decode_pin_view(*text, generation, db_identity(db_));
  if (view && !view->recorded && view->project != project) return std::nullopt;
  return view;
}

std::string PinViews::current_generation() const {
  return read_generation(dir_ / "views.gen");
}

// A new random generation, written in place (16 bytes at offset 0: a reader sees the old one, the
// new one, or something that is neither and uses no view). When it cannot be written, the file is
// removed, which leaves no view usable.
void PinViews::next_generation() const {
  const fs::path path = dir_ / "views.gen";
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r))
    r = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 40);
  const std::string g = fmt::format("{:016x}", r);
  auto opened = util::open_private_file(path, O_WRONLY);
  bool ok = false;
  if (opened) {
    const util::UniqueFd fd(*opened);
    ok = ::pwrite(fd.get(), g.data(), g.size(), 0) == static_cast<ssize_t>(g.size()) &&
         ::ftruncate(fd.get(), static_cast<off_t>(g.size())) == 0;
  }
  if (!ok) (void)::unlink(path.c_str());
}

Result<std::optional<util::FileLock>> PinViews::lock(util::FileLock::Mode mode) const {
  CTXKIT_TRY(util::make_private_dirs(dir_, db_.parent_path()));
  return util::FileLock::acquire_within(dir_ / "views.lock", mode, wait_);
}

PinViews::Change::Change(const PinViews* views) : views_(views) {
  if (auto held = views->lock(util::FileLock::Mode::Exclusive); held && held->has_value())
    lock_ = std::move(**held);
  views_->next_generation();
}

PinViews::Change::~Change() {
  if (views_) views_->next_generation();
}

PinViews::Change PinViews::change() const {
  return Change(this);
}

Result<void> PinViews::write(const std::string& session_id, const PinView& view,
                             const std::string& generation) const {
  if (!usable_id(session_id)) return {};
  const std::string identity = db_identity(db_);
  if (identity.empty()) return {};
  return util::write_file_atomic(dir_ / (session_id + ".view"),
                                 encode_pin_view(view, generation, identity), 0600,
                                 util::Durability::Flush);
}

}  // namespace ctxkit::store
