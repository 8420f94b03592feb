#include "archive/recall.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "archive/output_archive.hpp"
#include "claude/message_text.hpp"
#include "claude/session_locator.hpp"
#include "claude/transcript_head.hpp"
#include "core/project_folder.hpp"
#include "util/line_reader.hpp"
#include "util/regular_file.hpp"
#include "util/shell.hpp"

namespace ctxkit::archive {
namespace fs = std::filesystem;

namespace {
// The session's own transcript for one of its subagents'
// (<project>/<session>/subagents/agent-x.jsonl).
fs::path main_transcript(const fs::path& transcript, const std::string& agent) {
  if (agent.empty()) return transcript;
  fs::path session_dir = transcript.parent_path().parent_path();
  return session_dir.parent_path() / (session_dir.filename().string() + ".jsonl");
}

std::string project_of(const fs::path& transcript, const std::string& agent) {
  return main_transcript(transcript, agent).parent_path().filename().string();
}

// Cuts `text` after `max` bytes (at a UTF-8 boundary); returns how many bytes went.
uint64_t cut(std::string& text, size_t max) {
  if (text.size() <= max) return 0;
  size_t at = max;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  uint64_t gone = text.size() - at;
  text.resize(at);
  return gone;
}

// Whether the archived transcript at `path` holds `marker` from byte `from` on (read in
// windows that overlap by the marker's length; one that cannot be read holds nothing).
bool holds_from(const fs::path& path, uint64_t from, const std::string& marker) {
  auto file = util::open_regular_file(path, false);
  if (!file) return false;
  std::string window;
  std::string chunk(1 << 20, '\0');
  auto pos = static_cast<off_t>(from);
  bool found = false;
  while (!found) {
    ssize_t n = ::pread(file->fd, chunk.data(), chunk.size(), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pos += n;
    window.append(chunk.data(), static_cast<size_t>(n));
    found = window.find(marker) != std::string::npos;
    if (window.size() >= marker.size()) window.erase(0, window.size() - (marker.size() - 1));
  }
  ::close(file->fd);
  return found;
}
}  // namespace

Result<bool> ArchiveRecall::carries_marker(const std::string& session_id, const fs::path& main) {
  const std::string& marker = config_.exclude_marker;
  if (marker.empty()) return false;
  // What the index has read: the search's own rule.
  auto excluded = index_->excluded_sessions();
  if (!excluded) return std::unexpected(excluded.error());
  if (excluded->contains(session_id)) return true;
  // What it has not read yet (another indexer at work): the transcripts themselves.
  auto known = index_->files();
  if (!known) return std::unexpected(known.error());
  std::vector<fs::path> transcripts{main};
  std::error_code ec;
  for (const auto& a : fs::directory_iterator(main.parent_path() / session_id / "subagents", ec)) {
    const std::string agent = a.path().filename().string();
    if (agent.starts_with("agent-") && agent.ends_with(".jsonl")) transcripts.push_back(a.path());
  }
  for (const auto& t : transcripts) {
    auto it = known->find(t.string());
    if (holds_from(t, it == known->end() ? 0 : it->second.least.indexed_bytes, marker)) return true;
  }
  return false;
}

std::optional<SessionRef> parse_session_ref(const std::string& text) {
  SessionRef ref;
  auto slash = text.find('/');
  ref.session_id = text.substr(0, slash);
  if (slash != std::string::npos) {
    ref.agent = text.substr(slash + 1);
    if (!ref.agent.starts_with("agent-") || ref.agent.size() == 6 ||
        ref.agent.find('/') != std::string::npos)
      return std::nullopt;
  }
  if (!claude::looks_like_session_id(ref.session_id)) return std::nullopt;
  return ref;
}

std::string ArchiveRecall::resume_command(const std::string& session_id, const std::string& cwd) {
  std::string resume = "claude --resume " + util::shell_quote(session_id);
  return cwd.empty() ? resume : "cd " + util::shell_quote(cwd) + " && " + resume;
}

std::string ArchiveRecall::cwd_of(const fs::path& transcript, const std::string& agent) {
  fs::path main = main_transcript(transcript, agent);
  auto it = cwds_.find(main.string());
  if (it != cwds_.end()) return it->second;
  auto head = claude::read_transcript_head(main, {50, 4ull << 20});
  std::string cwd = head ? head->cwd : std::string();
  cwds_.emplace(main.string(), cwd);
  return cwd;
}

Result<ArchiveIndex*> ArchiveRecall::ready_index() {
  const auto now = std::chrono::steady_clock::now();
  if (index_ && checked_ && now - *checked_ < std::chrono::seconds(1)) {
    status_ = last_;
    status_.note.clear();
    return &*index_;
  }
  IndexStatus status;
  status.archived = true;
  if (!index_) {
    auto opened = open_index(loc_, &status.note);
    if (!opened) return std::unexpected(opened.error());
    index_.emplace(std::move(*opened));
  }
  // Finish what no indexer finished (a killed one, one that never started); when another is at
  // work, say how far it got.
  auto lock = IndexLock::acquire(loc_, false);
  if (!lock) return std::unexpected(lock.error());
  status.caught_up = lock->has_value();
  if (status.caught_up) {
    if (before_catch_up_) {
      if (auto before = index_progress(*index_, loc_, config_); before) before_catch_up_(*before);
    }
    auto run = index_pending(*index_, loc_, config_);
    if (!run) return std::unexpected(run.error());
    if (!run->first_error.empty() && status.note.empty()) status.note = run->first_error;
    lock->reset();
  }
  auto progress = index_progress(*index_, loc_, config_);
  if (!progress) return std::unexpected(progress.error());
  status.progress = *progress;
  checked_ = now;
  last_ = status_ = std::move(status);
  return &*index_;
}

Result<RecallAnswer> ArchiveRecall::search(store::SearchQuery q, bool resume) {
  RecallAnswer answer;
  std::error_code ec;
  status_ = {};
  if (!fs::exists(loc_.archive_dir(), ec)) return answer;
  if (store::SearchIndex::fts_query(q.words).empty())
    return fail("nothing to search for", Error::Kind::Invalid);
  if (q.project.find('/') != std::string::npos) q.project = core::project_folder_name(q.project);
  auto index = ready_index();
  if (!index) return std::unexpected(index.error());
  // Hits of excluded projects are dropped after ranking: ask for enough to fill the limit.
  const int wanted = q.limit;
  if (!config_.exclude_projects.empty()) q.limit = std::min(wanted * 4 + 20, 10000);
  auto found = (*index)->search(q);
  if (!found) return std::unexpected(found.error());
  std::erase_if(found->hits,
                [&](const store::SearchHit& h) { return project_is_excluded(h.project, config_); });
  if (found->hits.size() > static_cast<size_t>(wanted))
    found->hits.resize(static_cast<size_t>(wanted));
  fill_snippets(*found, q.words, outputs_dir(loc_));
  answer.capped = found->capped;
  for (auto& h : found->hits) {
    RecallHit r;
    r.agent = store::agent_of_path(h.path);
    r.session_id = h.session_id;
    r.cite = fmt::format("{}{}:{}", h.session_id, r.agent.empty() ? "" : "/" + r.agent, h.line);
    r.line = h.line;
    r.timestamp = std::move(h.timestamp);
    r.kind = std::move(h.role);
    r.project = std::move(h.project);
    r.snippet = std::move(h.snippet);
    r.rank = h.rank;
    if (resume) {
      r.cwd = cwd_of(h.path, r.agent);
      r.resume = resume_command(r.session_id, r.cwd);
    }
    answer.hits.push_back(std::move(r));
  }
  return answer;
}

Result<ShowAnswer> ArchiveRecall::show(const SessionRef& ref, int64_t line, int before, int after,
                                       size_t max_chars, size_t context_chars) {
  const std::string name = ref.session_id + (ref.agent.empty() ? "" : "/" + ref.agent);
  std::error_code ec;
  status_ = {};
  if (!fs::exists(loc_.archive_dir(), ec))
    return fail("nothing is archived yet", Error::Kind::NotFound);
  if (line < 1) return fail("the line numbers start at 1", Error::Kind::Invalid);
  CTXKIT_TRY(ready_index());
  auto file = index_->file_of(ref.session_id, ref.agent);
  if (!file) return std::unexpected(file.error());
  ShowAnswer out;
  out.session_id = ref.session_id;
  out.agent = ref.agent;
  if (*file) out.project = project_of(**file, ref.agent);
  if (!*file || project_is_excluded(out.project, config_))
    return fail(fmt::format("session {} is not in the searchable archive", name),
                Error::Kind::NotFound);
  auto marked = carries_marker(ref.session_id, main_transcript(**file, ref.agent));
  if (!marked) return std::unexpected(marked.error());
  if (*marked)
    return fail(fmt::format("session {} is not in the searchable archive", name),
                Error::Kind::NotFound);
  const int64_t first = std::max<int64_t>(1, line - std::max(before, 0));
  const int64_t last = line + std::max(after, 0);
  auto start = index_->line_at_or_before(**file, first);
  if (!start) return std::unexpected(start.error());
  const uint64_t from = *start ? static_cast<uint64_t>((*start)->offset) : 0;
  const uint64_t from_line = *start ? static_cast<uint64_t>((*start)->line) : 1;
  auto reader = util::LineReader::open(**file, {}, 256 << 10, from, from_line);
  if (!reader) return std::unexpected(reader.error());
  claude::MessageTextExtractor extract;
  bool reached = false;
  while (true) {
    auto l = reader->next();
    if (!l) return std::unexpected(l.error());
    if (!*l) break;
    const auto n = static_cast<int64_t>((*l)->number);
    if (n < first) continue;
    if (n > last) break;
    if (n == line) reached = true;
    claude::MessageText m = extract.extract((*l)->text, (*l)->capacity);
    if (m.text.empty() && n != line) continue;
    ShownMessage s{n, std::move(m.role), std::move(m.timestamp), std::move(m.text), 0};
    s.omitted_chars = cut(s.text, n == line ? max_chars : context_chars);
    out.messages.push_back(std::move(s));
  }
  if (!reached)
    return fail(fmt::format("session {} has no line {}", name, line), Error::Kind::NotFound);
  out.cwd = cwd_of(**file, ref.agent);
  out.resume = resume_command(ref.session_id, out.cwd);
  return out;
}

Result<OutputSlice> ArchiveRecall::show_output(const std::string& handle, const OutputRange& range,
                                               const std::string& search, size_t max_bytes) {
  auto slice = read_output(loc_, handle, range, search, max_bytes);
  if (!slice) return slice;
  if (!slice->meta.project.empty() && config_.excludes(slice->meta.project))
    return fail(fmt::format("output '{}' belongs to a project excluded from the archive", handle),
                Error::Kind::NotFound);
  return slice;
}

}  // namespace ctxkit::archive
