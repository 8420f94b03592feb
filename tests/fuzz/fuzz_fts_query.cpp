// The archive's query builder: whatever words a user or the model gives are either refused in
// one line (too long, nothing to search for) or searched, ranked and unranked, in a small index:
// FTS5 never reads them as syntax. Every phrase is one quoted word.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "store/search_index.hpp"

namespace {
namespace fs = std::filesystem;
using ctxkit::Error;
using ctxkit::store::SearchIndex;

struct Fixture {
  fs::path dir;
  std::unique_ptr<SearchIndex> index;
  Fixture() {
    char tmpl[] = "/tmp/fuzz_fts_query.XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    dir = tmpl;
    auto opened = SearchIndex::open(dir / "index.db");
    if (!opened) std::abort();
    index = std::make_unique<SearchIndex>(std::move(*opened));
    const char* texts[] = {
        "error at engine.c:42: null pointer", "please fix the flux-capacitor",
        "the build failed with ERR_QUOKKA_7731", "\"quoted\" words AND NOT OR",
        "caf\xc3\xa9 \xd0\x9f\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82 NEAR(a b)"};
    if (!index->begin()) std::abort();
    auto file = index->file((dir / "S.jsonl").string(), "S", "-p");
    if (!file) std::abort();
    int64_t line = 0;
    for (const char* t : texts) {
      ++line;
      if (!index->add(file->id, {line, line * 100, "2026-11-20T10:00:00.000Z", "user", t}))
        std::abort();
    }
    if (!index->commit()) std::abort();
  }
  ~Fixture() {
    index.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// A phrase is "…" around one word with no space nor control character, its quotes doubled.
void check_phrase(const std::string& p) {
  if (p.size() < 3 || p.front() != '"' || p.back() != '"') std::abort();
  for (size_t i = 1; i + 1 < p.size(); ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c <= 0x20 || c == 0x7F) std::abort();
    if (c == '"') {
      if (i + 2 >= p.size() || p[i + 1] != '"') std::abort();
      ++i;
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  const std::string words(reinterpret_cast<const char*>(data), size);
  const auto phrases = SearchIndex::fts_phrases(words);
  std::string joined;
  for (const auto& p : phrases) {
    check_phrase(p);
    joined += (joined.empty() ? "" : " ") + p;
  }
  if (SearchIndex::fts_query(words) != joined) std::abort();
  const std::string too_long = SearchIndex::query_too_long(words);
  auto refused = [&](const Error& e) {
    return e.kind == Error::Kind::Invalid &&
           (e.message == too_long || (phrases.empty() && e.message == "nothing to search for"));
  };
  const ctxkit::store::SearchQuery q{words, "", "", "", 10};
  for (bool ranked : {true, false}) {
    auto found = fixture.index->search(q, SearchIndex::kMaxRanked, ranked);
    if (!found && !refused(found.error())) std::abort();
    if (found && (!too_long.empty() || phrases.empty())) std::abort();
  }
  auto counted = fixture.index->count_matches(q, 100);
  if (!counted && !refused(counted.error())) std::abort();
  if (too_long.empty()) {
    auto counts = fixture.index->phrase_counts(phrases);
    if (!counts) std::abort();
  }
  (void)ctxkit::store::make_snippet(words, words);
  (void)ctxkit::store::make_snippet("error at engine.c:42: null pointer", words);
  return 0;
}
