#include "trim/trimmer.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "trim/json_text.hpp"

namespace ctxkit::trim {

namespace od = simdjson::ondemand;

namespace {

struct Edit {
  size_t offset;
  size_t length;
  std::string text;
};

// A string value located in the line: its token (with quotes) and decoded length.
struct StringSpan {
  size_t offset = 0;       // of the opening quote
  size_t length = 0;       // token length, quotes included
  std::string_view inner;  // the escaped text between the quotes
};

struct ImageSpan {
  size_t offset = 0;
  size_t length = 0;
  std::string_view media_type;
  size_t data_chars = 0;
};

// Its strings are views of the parser's buffer, valid until the next line is parsed.
struct Block {
  std::string_view type, id, name, tool_use_id;
  bool content_is_string = false, content_is_array = false;
  StringSpan content_string;
  size_t array_offset = 0, array_length = 0;
  std::vector<StringSpan> texts;        // text blocks of an array content
  std::vector<ImageSpan> images;        // image blocks of an array content
  std::vector<StringSpan> long_inputs;  // long strings in tool_use.input
};

std::string_view rtrim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Calls fn(key, value) for each field of `obj`, in order. False when the object cannot be read or
// fn returns false (the line is then left as it is).
template <class Fn>
bool for_each_field(od::object obj, Fn&& fn) {
  for (auto fr : obj) {
    od::field f;
    if (std::move(fr).get(f)) return false;
    std::string_view key;
    if (f.unescaped_key().get(key)) return false;
    if (!fn(key, f.value())) return false;
  }
  return true;
}

// A scalar value's text in the line, without trailing white space.
std::string_view token(od::value& v) {
  return rtrim(v.raw_json_token());
}

// Nesting below this depth in a tool input or a usage object is opaque: it is not walked (no
// recursion without a limit) and is copied unchanged.
constexpr int kMaxWalkDepth = 64;

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// Whether `hay` contains `needle`, found by memchr for needle[anchor] (a byte rarer in the text
// than the first, which is what memmem looks for) and a compare around each hit.
bool contains_by(std::string_view hay, std::string_view needle, size_t anchor) {
  if (hay.size() < needle.size()) return false;
  const char* p = hay.data() + anchor;
  const char* const last = hay.data() + (hay.size() - needle.size()) + anchor;  // inclusive
  while (p <= last) {
    p = static_cast<const char*>(std::memchr(p, needle[anchor], static_cast<size_t>(last - p) + 1));
    if (p == nullptr) return false;
    if (std::memcmp(p - anchor, needle.data(), needle.size()) == 0) return true;
    ++p;
  }
  return false;
}

// Code points of UTF-8 text.
size_t utf8_chars(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// Whether a string was cut before: the notice ends the text, so only its tail is searched.
bool already_trimmed(std::string_view escaped) {
  // Notices end with "for full content]" (claude-code-tools' and ours); test that first.
  if (!escaped.ends_with("for full content]")) return false;
  constexpr size_t kTail = 8192;
  if (escaped.size() > kTail) escaped = escaped.substr(escaped.size() - kTail);
  return contains(escaped, Trimmer::kNoticeMarker);
}

// Hash of a string key that is also looked up by std::string_view (no key built to look one up).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

const std::string kUnknownTool = "(unknown)";

// The figures of one block: its tool's, and what they add to the totals (no map to fill).
struct BlockFigures {
  std::string tool;  // empty: no figure of a tool
  ToolTrimStats t;
  uint64_t results_trimmed = 0, inputs_trimmed = 0, images_replaced = 0, results_images_only = 0,
           chars_saved = 0;
};

ToolTrimStats& tool_figures(TrimStats& s, const std::string& tool) {
  return s.per_tool[tool];
}
ToolTrimStats& tool_figures(BlockFigures& f, const std::string& tool) {
  f.tool = tool;
  return f.t;
}

// Adds (sign > 0) or takes back one figure.
void add_figure(uint64_t& to, uint64_t v, int sign) {
  to = sign > 0 ? to + v : to - v;
}

// Adds (sign > 0) or takes back a tool's figures.
void add(ToolTrimStats& to, const ToolTrimStats& t, int sign) {
  add_figure(to.results, t.results, sign);
  add_figure(to.result_chars, t.result_chars, sign);
  add_figure(to.trimmed, t.trimmed, sign);
  add_figure(to.chars_saved, t.chars_saved, sign);
  add_figure(to.inputs_trimmed, t.inputs_trimmed, sign);
}

void add(TrimStats& s, const BlockFigures& f, int sign) {
  if (!f.tool.empty()) add(s.per_tool[f.tool], f.t, sign);
  add_figure(s.results_trimmed, f.results_trimmed, sign);
  add_figure(s.inputs_trimmed, f.inputs_trimmed, sign);
  add_figure(s.images_replaced, f.images_replaced, sign);
  add_figure(s.results_images_only, f.results_images_only, sign);
  add_figure(s.chars_saved, f.chars_saved, sign);
}

}  // namespace

struct Trimmer::Impl {
  TrimOptions opt;
  od::parser parser;
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> tool_names;
  std::vector<std::vector<std::string>>
      responses;  // tool_use ids per main-chain response (prescan)
  std::string last_response_id;
  std::vector<Edit> edits;
  const char* base = nullptr;
  uint64_t line_number = 0;
  bool usage_zeroed = false;
  bool prescan = false;
  bool analysis_only = false;  // dry run: figures only, no edits kept
  std::vector<Block> blocks;   // the line's content blocks, decided once its type is known
  // The tool results and inputs already counted: the figures say what the model no longer sees,
  // so each is counted once, however many lines hold a copy of it.
  StringSet counted_results, counted_inputs;
  // Characters of "\n" + notice() but for its three numbers (see note_chars).
  size_t notice_base_chars = 0;
  // Starting mid-file (see Trimmer::start_mid_file): lines put aside, with the tool names known
  // at each for its results, and what was counted, block by block, to take back in join().
  // Mid-file, line numbers are counted from the part's start: the notice's line number is
  // counted as no digit, each cut noted, and join() takes its digits off once they are known.
  bool mid_file = false;
  bool deferred_last = false;
  bool line_unsure = false;  // a cut of the line depends on its number's digits
  std::vector<std::vector<std::pair<std::string, std::string>>> deferred_names;
  bool keep_ledger = false;
  struct Counted {
    std::string id;
    bool input = false;
    uint64_t line = 0;
    uint64_t cuts = 0;  // notices of the block (mid-file: their line's digits not counted)
    BlockFigures figures;
  };
  std::vector<Counted> ledger;
  uint64_t block_cuts = 0;

  size_t off(const char* p) const { return static_cast<size_t>(p - base); }

  bool string_span(od::value& v, StringSpan& out) {
    std::string_view tok = token(v);
    if (tok.size() < 2 || tok.front() != '"' || tok.back() != '"') return false;
    out.offset = off(tok.data());
    out.length = tok.size();
    out.inner = tok.substr(1, tok.size() - 2);
    return true;
  }

  bool zero_numbers(od::object obj, int depth = 0) {
    for (auto fr : obj) {
      od::field f;
      if (std::move(fr).get(f)) return false;
      od::value v = f.value();
      od::json_type t;
      if (v.type().get(t)) return false;
      if (t == od::json_type::number) {
        std::string_view tok = token(v);
        if (tok != "0") {
          edits.push_back({off(tok.data()), tok.size(), "0"});
          usage_zeroed = true;
        }
      } else if (t == od::json_type::object && depth < kMaxWalkDepth) {
        od::object inner;
        if (v.get_object().get(inner) || !zero_numbers(inner, depth + 1)) return false;
      }
    }
    return true;
  }

  // Collects string values longer than the threshold anywhere in a tool_use input.
  bool collect_long_strings(od::value v, std::vector<StringSpan>& out, int depth = 0) {
    if (depth > kMaxWalkDepth) return true;  // opaque: skipped by the parent's iteration
    od::json_type t;
    if (v.type().get(t)) return false;
    if (t == od::json_type::string) {
      StringSpan s;
      if (!string_span(v, s)) return false;
      if (s.inner.size() > opt.threshold) out.push_back(s);
      return true;
    }
    if (t == od::json_type::object) {
      od::object o;
      if (v.get_object().get(o)) return false;
      for (auto fr : o) {
        od::field f;
        if (std::move(fr).get(f)) return false;
        if (!collect_long_strings(f.value(), out, depth + 1)) return false;
      }
      return true;
    }
    if (t == od::json_type::array) {
      od::array a;
      if (v.get_array().get(a)) return false;
      for (auto er : a) {
        od::value e;
        if (std::move(er).get(e) || !collect_long_strings(e, out, depth + 1)) return false;
      }
    }
    return true;
  }

  // The string's decoded text, a view of the parser's buffer (valid until the next line).
  static bool read_string(od::value v, std::string_view& out) { return !v.get_string().get(out); }

  // Characters of "\n" + notice(original, kept, line_number, notice_file), counted without
  // formatting it (a dry run only needs to know what a cut would save).
  size_t note_chars(uint64_t original, uint64_t kept) const {
    if (mid_file) return notice_base_chars + fmt::formatted_size("{}{}", original, kept);
    return notice_base_chars + fmt::formatted_size("{}{}{}", original, kept, line_number);
  }

  // Characters a cut saves, `chars` before and `new_chars` after (0: no cut). Mid-file, the
  // line number's digits (1 to 20) are not in new_chars: a cut that saves more than 20 is made
  // whatever they are (and noted), one that saves 20 or less makes the line unsure.
  uint64_t saving(uint64_t chars, uint64_t new_chars) {
    if (new_chars >= chars) return 0;
    const uint64_t saved = chars - new_chars;
    if (mid_file) {
      if (saved <= 20) {
        line_unsure = true;
        return 0;
      }
      ++block_cuts;
    }
    return saved;
  }

  bool walk_content_array(od::array arr, od::document& doc, Block& b, const char* array_start) {
    for (auto er : arr) {
      od::value el;
      if (std::move(er).get(el)) return false;
      od::json_type t;
      if (el.type().get(t)) return false;
      if (t != od::json_type::object) continue;
      const char* el_start = el.raw_json_token().data();
      od::object o;
      if (el.get_object().get(o)) return false;
      std::string_view type;
      StringSpan text;
      bool has_text = false;
      ImageSpan img;
      bool read = for_each_field(o, [&](std::string_view key, od::value& v) {
        if (key == "type") return read_string(v, type);
        if (key == "text") {
          if (!string_span(v, text)) return false;
          has_text = true;
          return true;
        }
        if (key != "source") return true;
        od::object src;
        if (v.get_object().get(src)) return true;
        return for_each_field(src, [&](std::string_view sk, od::value& sv) {
          if (sk == "media_type") return read_string(sv, img.media_type);
          if (sk == "data") {
            StringSpan d;
            if (string_span(sv, d)) img.data_chars = d.inner.size();
          }
          return true;
        });
      });
      if (!read) return false;
      if (type == "text" && has_text) b.texts.push_back(text);
      if (type == "image") {
        const char* end = nullptr;
        if (doc.current_location().get(end)) return false;
        img.offset = off(el_start);
        img.length = rtrim(std::string_view(el_start, static_cast<size_t>(end - el_start))).size();
        b.images.push_back(img);
      }
    }
    const char* end = nullptr;
    if (doc.current_location().get(end)) return false;
    b.array_offset = off(array_start);
    b.array_length =
        rtrim(std::string_view(array_start, static_cast<size_t>(end - array_start))).size();
    return true;
  }

  bool walk_block(od::object o, od::document& doc, Block& b) {
    return for_each_field(o, [&](std::string_view key, od::value& v) {
      if (key == "type") return read_string(v, b.type);
      if (key == "id") return read_string(v, b.id);
      if (key == "name") return read_string(v, b.name);
      if (key == "tool_use_id") return read_string(v, b.tool_use_id);
      if (key == "input") return prescan || collect_long_strings(v, b.long_inputs);
      if (key != "content" || prescan) return true;
      od::json_type t;
      if (v.type().get(t)) return false;
      if (t == od::json_type::string) {
        if (!string_span(v, b.content_string)) return false;
        b.content_is_string = true;
      } else if (t == od::json_type::array) {
        const char* start = v.raw_json_token().data();
        od::array arr;
        if (v.get_array().get(arr)) return false;
        if (!walk_content_array(arr, doc, b, start)) return false;
        b.content_is_array = true;
      }
      return true;
    });
  }

  bool targeted(const std::string& tool, std::string_view tool_use_id) const {
    return opt.tools.count(tool) && (opt.protected_tool_use_ids.empty() ||
                                     !opt.protected_tool_use_ids.count(std::string(tool_use_id)));
  }

  // Cuts one string value to the threshold plus the notice; returns the characters saved (0 if
  // nothing would be saved or it was cut before).
  // `known_chars`: the string's length in characters when the caller has counted it already.
  uint64_t cut_string(const StringSpan& s, std::optional<size_t> known_chars = std::nullopt) {
    if (s.inner.size() <= opt.threshold) return 0;
    if (already_trimmed(s.inner)) return 0;
    size_t chars = known_chars ? *known_chars : json_string_length(s.inner);
    if (chars <= opt.threshold) return 0;
    const uint64_t saved = saving(chars, opt.threshold + note_chars(chars, opt.threshold));
    if (saved == 0) return 0;
    if (analysis_only) return saved;
    std::string note = "\n" + Trimmer::notice(chars, opt.threshold, line_number, opt.notice_file);
    size_t keep = json_string_prefix(s.inner, opt.threshold);
    std::string text;
    text.reserve(keep + note.size() + 2);
    text += '"';
    text.append(s.inner.substr(0, keep));
    text += json_escape(note);
    text += '"';
    edits.push_back({s.offset, s.length, std::move(text)});
    return saved;
  }

  std::string image_placeholder(const ImageSpan& img) const {
    std::string text = fmt::format(
        "[image removed by ctx-trim: {}, {} base64 characters. See line {} of {} for the original]",
        img.media_type.empty() ? "image" : img.media_type, img.data_chars, line_number,
        opt.notice_file);
    return fmt::format("{{\"type\":\"text\",\"text\":\"{}\"}}", json_escape(text));
  }

  // Whether a copy of this block is counted: blocks of the conversation (`user` and `assistant`
  // lines) once each; copies elsewhere (Claude Code 2.1.332's `api-request-blob` lines hold the
  // messages it sent) are cut as well, which shrinks the file, but not counted again.
  bool counts(bool conversation, StringSet& seen, std::string_view id) {
    if (!conversation) return false;
    if (id.empty()) return true;
    if (seen.find(id) != seen.end()) return false;
    seen.emplace(id);
    return true;
  }

  void note_tool_use(const Block& b) {
    if (b.id.empty()) return;
    auto it = tool_names.find(b.id);
    if (it == tool_names.end())
      tool_names.emplace(std::string(b.id), std::string(b.name));
    else if (it->second != b.name)
      it->second.assign(b.name);
  }

  // Mid-file: whether a tool result of the line names a tool_use not seen before it.
  bool names_unseen_tool_use() const {
    std::vector<std::string_view> in_line;
    for (const Block& b : blocks) {
      if (b.type == "tool_use" && !b.id.empty()) in_line.push_back(b.id);
      if (b.type != "tool_result" || b.tool_use_id.empty()) continue;
      if (tool_names.find(b.tool_use_id) == tool_names.end() &&
          std::find(in_line.begin(), in_line.end(), b.tool_use_id) == in_line.end())
        return true;
    }
    return false;
  }

  // The names the line's results find before the line is read.
  std::vector<std::pair<std::string, std::string>> names_before() const {
    std::vector<std::pair<std::string, std::string>> names;
    for (const Block& b : blocks) {
      if (b.type != "tool_result") continue;
      if (auto it = tool_names.find(b.tool_use_id); it != tool_names.end())
        names.emplace_back(it->first, it->second);
    }
    return names;
  }

  // Puts the line aside with the names its results found before it; its tool_use names are kept
  // (later lines look them up).
  void defer_line(std::vector<std::pair<std::string, std::string>> names) {
    for (const Block& b : blocks)
      if (b.type == "tool_use") note_tool_use(b);
    deferred_names.push_back(std::move(names));
    deferred_last = true;
  }

  // Runs fn(stats) with the figures a block adds to: the totals when it counts, a scratch copy
  // when it does not, and with a ledger, a copy of its own, added to the totals and kept.
  template <class Fn>
  void figures(bool count, std::string_view id, bool input, TrimStats& counted, Fn&& fn) {
    if (!count) {
      BlockFigures scratch;
      fn(scratch);
    } else if (!keep_ledger || (id.empty() && !mid_file)) {  // no id: never taken back
      fn(counted);
    } else {
      BlockFigures own;
      block_cuts = 0;
      fn(own);
      add(counted, own, +1);
      ledger.push_back({std::string(id), input, line_number, block_cuts, std::move(own)});
    }
  }

  void decide(const Block& b, TrimStats& counted, bool conversation) {
    if (b.type == "tool_use") {
      note_tool_use(b);
      if (prescan || b.long_inputs.empty()) return;
      const std::string name(b.name);
      if (!targeted(name, b.id)) return;
      const bool count = counts(conversation, counted_inputs, b.id);
      figures(count, b.id, true, counted, [&](auto& stats) { cut_inputs(b, name, stats); });
      return;
    }
    if (b.type != "tool_result" || prescan) return;
    const bool count = counts(conversation, counted_results, b.tool_use_id);
    figures(count, b.tool_use_id, false, counted, [&](auto& stats) { decide_result(b, stats); });
  }

  template <class Stats>
  void cut_inputs(const Block& b, const std::string& name, Stats& stats) {
    for (const auto& s : b.long_inputs) {
      uint64_t saved = cut_string(s);
      if (!saved) continue;
      auto& t = tool_figures(stats, name);
      t.inputs_trimmed++;
      t.chars_saved += saved;
      stats.inputs_trimmed++;
      stats.chars_saved += saved;
    }
  }

  template <class Stats>
  void decide_result(const Block& b, Stats& stats) {
    auto it = tool_names.find(b.tool_use_id);
    const std::string& tool = it != tool_names.end() ? it->second : kUnknownTool;
    auto& t = tool_figures(stats, tool);
    t.results++;
    // Each string is counted once (the count was half of a dry run's own work when it was
    // counted again to decide the cut).
    const uint64_t content_chars =
        b.content_is_string ? json_string_length(b.content_string.inner) : 0;
    uint64_t text_chars = 0;
    for (const auto& s : b.texts) text_chars += json_string_length(s.inner);
    uint64_t chars = content_chars + text_chars;
    for (const auto& i : b.images) chars += i.data_chars;
    t.result_chars += chars;
    if (!targeted(tool, b.tool_use_id)) return;
    uint64_t saved = 0;
    bool images_only = false;
    if (b.content_is_string) {
      saved = cut_string(b.content_string, static_cast<size_t>(content_chars));
    } else if (b.content_is_array) {
      bool already = false;
      for (const auto& s : b.texts) already = already || already_trimmed(s.inner);
      if (!already && text_chars > opt.threshold) {
        // Rebuild the array: the first `threshold` characters of the text blocks (joined by
        // newlines) with the notice, then a placeholder per image.
        std::string joined;
        size_t budget = opt.threshold;
        for (const auto& s : b.texts) {
          if (budget == 0) break;
          if (!joined.empty()) {
            joined += "\\n";
            --budget;
            if (budget == 0) break;
          }
          size_t n = json_string_length(s.inner);
          size_t take = std::min(n, budget);
          joined.append(s.inner.substr(0, json_string_prefix(s.inner, take)));
          budget -= take;
        }
        const uint64_t new_chars =
            json_string_length(joined) + note_chars(text_chars, opt.threshold);
        std::string arr;  // a dry run only counts: the edit is recorded without its text
        if (!analysis_only) {
          std::string note =
              "\n" + Trimmer::notice(text_chars, opt.threshold, line_number, opt.notice_file);
          arr = "[{\"type\":\"text\",\"text\":\"" + joined + json_escape(note) + "\"}";
          for (const auto& img : b.images) {
            arr += ',';
            arr += image_placeholder(img);
          }
          arr += ']';
        }
        uint64_t image_chars = 0;
        for (const auto& img : b.images) image_chars += img.data_chars;
        const uint64_t text_saved = saving(text_chars, new_chars);
        if (text_saved > 0 || !b.images.empty()) {
          saved = text_saved + image_chars;
          edits.push_back({b.array_offset, b.array_length, std::move(arr)});
          stats.images_replaced += b.images.size();
        }
      } else if (!b.images.empty()) {
        images_only = true;
        for (const auto& img : b.images) {
          edits.push_back(
              {img.offset, img.length, analysis_only ? std::string() : image_placeholder(img)});
          saved += img.data_chars;
          stats.images_replaced++;
        }
      }
    }
    if (saved > 0) {
      t.trimmed++;
      t.chars_saved += saved;
      stats.results_trimmed++;
      if (images_only) stats.results_images_only++;
      stats.chars_saved += saved;
    }
  }

  bool walk_message(od::object m, od::document& doc, std::string_view& msg_id,
                    std::vector<std::string_view>& tool_uses) {
    return for_each_field(m, [&](std::string_view key, od::value& v) {
      if (key == "id") return read_string(v, msg_id);
      if (key == "content") {
        od::json_type t;
        if (v.type().get(t)) return false;
        if (t != od::json_type::array) return true;
        od::array arr;
        if (v.get_array().get(arr)) return false;
        for (auto er : arr) {
          od::value el;
          if (std::move(er).get(el)) return false;
          od::json_type et;
          if (el.type().get(et)) return false;
          if (et != od::json_type::object) continue;
          od::object o;
          if (el.get_object().get(o)) return false;
          Block b;
          if (!walk_block(o, doc, b)) return false;
          if (b.type == "tool_use") tool_uses.push_back(b.id);
          blocks.push_back(std::move(b));
        }
        return true;
      }
      if (key != "usage" || prescan || analysis_only) return true;
      od::json_type t;
      if (v.type().get(t)) return false;
      if (t != od::json_type::object) return true;
      od::object u;
      return !v.get_object().get(u) && zero_numbers(u);
    });
  }

  // Walks one line. Returns false when the line cannot be used (not JSON, not UTF-8, ...).
  bool walk(std::string_view line, size_t capacity, TrimStats& stats) {
    base = line.data();
    edits.clear();
    blocks.clear();
    usage_zeroed = false;
    simdjson::padded_string_view view(line.data(), line.size(), capacity);
    od::document doc;
    if (parser.iterate(view).get(doc)) return false;
    od::object obj;
    if (doc.get_object().get(obj)) return false;
    std::string_view type, msg_id;
    bool sidechain = false;
    std::vector<std::string_view> tool_uses;
    uint64_t error_markers = 0;  // added to the figures once the line is read whole
    bool read = for_each_field(obj, [&](std::string_view key, od::value& v) {
      if (key == "sessionId") {
        StringSpan s;
        if (!prescan && !opt.new_session_id.empty() && string_span(v, s))
          edits.push_back({s.offset, s.length, "\"" + opt.new_session_id + "\""});
        return true;
      }
      if (key == "type") return read_string(v, type);
      if (key == "isSidechain") {
        bool b = false;
        if (!v.get_bool().get(b)) sidechain = b;
        return true;
      }
      if (key == "isApiErrorMessage" && !prescan) {
        std::string_view tok = token(v);
        if (tok == "true") {
          edits.push_back({off(tok.data()), tok.size(), "false"});
          error_markers++;
        }
        return true;
      }
      if (key == "error" && !prescan) {
        std::string_view tok = token(v);
        if (tok == "\"invalid_request\"") {
          edits.push_back({off(tok.data()), tok.size(), "null"});
          error_markers++;
        }
        return true;
      }
      if (key != "message") return true;
      od::json_type t;
      if (v.type().get(t)) return false;
      if (t != od::json_type::object) return true;
      od::object m;
      return !v.get_object().get(m) && walk_message(m, doc, msg_id, tool_uses);
    });
    if (!read) return false;
    // The line's type may stand after its message: decide once the whole line is read.
    const bool conversation = type == "user" || type == "assistant";
    if (mid_file && !prescan) {
      // Put aside when a result names a tool_use not seen, or a cut depends on the line's
      // number. The names its results find are those before the line: decide() changes them
      // only for a tool_use of the line.
      const bool has_use = std::any_of(blocks.begin(), blocks.end(),
                                       [](const Block& b) { return b.type == "tool_use"; });
      std::vector<std::pair<std::string, std::string>> names;
      if (has_use) names = names_before();
      if (names_unseen_tool_use()) {
        defer_line(has_use ? std::move(names) : names_before());
        return true;
      }
      const size_t ledger_size = ledger.size();
      line_unsure = false;
      for (const Block& b : blocks) decide(b, stats, conversation);
      if (line_unsure) {
        // What it counted is taken back (mid-file, every counted block is in the ledger). Its
        // blocks stay marked as counted: `rest` counts them at this line, before any later
        // copy `second` would count.
        for (size_t i = ledger_size; i < ledger.size(); ++i) add(stats, ledger[i].figures, -1);
        ledger.resize(ledger_size);
        deferred_names.push_back(has_use ? std::move(names) : names_before());
        deferred_last = true;
        return true;
      }
    } else {
      for (const Block& b : blocks) decide(b, stats, conversation);
    }
    stats.error_markers += error_markers;
    if (prescan && type == "assistant" && !sidechain) {
      if (responses.empty() || msg_id != last_response_id || msg_id.empty()) {
        responses.emplace_back();
        last_response_id = msg_id;
      }
      for (auto id : tool_uses) responses.back().emplace_back(id);
    }
    if (usage_zeroed) stats.usage_zeroed++;
    return true;
  }
};

Trimmer::Trimmer(TrimOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  // The notice with 0 for each of its three numbers, less those three digits.
  impl_->notice_base_chars = utf8_chars("\n" + notice(0, 0, 0, impl_->opt.notice_file)) - 3;
}
Trimmer::~Trimmer() = default;

std::string Trimmer::notice(uint64_t original, uint64_t kept, uint64_t line,
                            const std::string& file) {
  return fmt::format(
      "[...truncated - original content was {} characters, showing first {}. See line {} of {} for "
      "full content]",
      original, kept, line, file);
}

bool Trimmer::process(std::string_view line, size_t capacity, uint64_t line_number,
                      std::string* out) {
  stats_.lines++;
  impl_->line_number = line_number;
  impl_->prescan = false;
  impl_->analysis_only = out == nullptr;
  impl_->deferred_last = false;
  if (!out) {
    // Analysis only: a line without tool blocks changes no figure. '_' is rarer than '"'.
    if (!contains_by(line, "\"tool_", 5)) return false;
  }
  // The line's figures go straight into the totals: walk() adds them only once the line is read
  // whole (an unusable line adds none).
  if (!impl_->walk(line, capacity, stats_)) {
    // Not usable: it is kept as it is.
    stats_.lines_unparsed++;
    if (out) out->append(line);
    return false;
  }
  if (impl_->deferred_last) return false;  // counted by `rest` (see join)
  auto& edits = impl_->edits;
  if (edits.empty()) {
    if (out) out->append(line);
    return false;
  }
  stats_.lines_changed++;
  if (!out) return true;
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.offset < b.offset; });
  size_t pos = 0;
  for (const auto& e : edits) {
    if (e.offset < pos) continue;  // overlapping (nested) edit: the outer one already applies
    out->append(line.substr(pos, e.offset - pos));
    out->append(e.text);
    pos = e.offset + e.length;
  }
  out->append(line.substr(pos));
  return true;
}

void Trimmer::prescan(std::string_view line, size_t capacity) {
  if (!contains(line, "\"assistant\"")) return;
  impl_->prescan = true;
  TrimStats scratch;
  impl_->walk(line, capacity, scratch);
  impl_->prescan = false;
}

std::unordered_set<std::string> Trimmer::tool_use_ids_of_last_responses(size_t n) const {
  std::unordered_set<std::string> out;
  const auto& r = impl_->responses;
  for (size_t i = r.size() > n ? r.size() - n : 0; i < r.size(); ++i)
    for (const auto& id : r[i]) out.insert(id);
  return out;
}

void Trimmer::start_mid_file() {
  impl_->mid_file = true;
  impl_->keep_ledger = true;
}

bool Trimmer::last_line_deferred() const {
  return impl_->deferred_last;
}

void Trimmer::continue_after(Trimmer& first) {
  impl_->tool_names = std::move(first.impl_->tool_names);
  impl_->counted_results = std::move(first.impl_->counted_results);
  impl_->counted_inputs = std::move(first.impl_->counted_inputs);
  impl_->keep_ledger = true;
}

void Trimmer::recall_names(const Trimmer& second, size_t deferred_index) {
  // What `second` knew when it put the line aside stood after `first`'s part: it wins.
  for (const auto& [id, name] : second.impl_->deferred_names.at(deferred_index))
    impl_->tool_names.insert_or_assign(id, name);
}

TrimStats Trimmer::join(const Trimmer& first, const Trimmer& second, const Trimmer& rest) {
  TrimStats total = first.stats_;
  total += second.stats_;
  TrimStats put_aside = rest.stats_;
  put_aside.lines = 0;  // `second` counted those lines
  total += put_aside;
  // `second` numbered its lines from 1: its line j is line before + j.
  const uint64_t before = first.stats_.lines;
  // The digits of the line numbers in `second`'s notices, not counted there: taken off now.
  auto digits_of = [&](const Impl::Counted& c) -> uint64_t {
    return c.cuts * fmt::formatted_size("{}", before + c.line);
  };
  for (const auto& c : second.impl_->ledger) {
    if (const uint64_t chars = digits_of(c); chars > 0) {
      total.chars_saved -= chars;
      total.per_tool[c.figures.tool].chars_saved -= chars;
    }
  }
  // A block is counted once, at its first copy. `rest` knew what `first` counted; what `second`
  // counted again, or before a copy `rest` counted, is taken back.
  using Key = std::pair<std::string_view, bool>;
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<std::string_view>{}(k.first) ^ static_cast<size_t>(k.second);
    }
  };
  std::unordered_map<Key, const Impl::Counted*, KeyHash> by_rest;
  for (const auto& c : rest.impl_->ledger) by_rest.emplace(Key{c.id, c.input}, &c);
  for (const auto& c : second.impl_->ledger) {
    if (c.id.empty()) continue;  // counted each time
    const auto& seen = c.input ? rest.impl_->counted_inputs : rest.impl_->counted_results;
    if (seen.find(c.id) == seen.end()) continue;
    auto it = by_rest.find(Key{c.id, c.input});
    if (it != by_rest.end() && it->second->line > before + c.line) {
      add(total, it->second->figures, -1);  // second's copy came first
    } else {
      BlockFigures figures = c.figures;
      const uint64_t chars = digits_of(c);
      figures.chars_saved -= chars;
      figures.t.chars_saved -= chars;
      add(total, figures, -1);
    }
  }
  // A tool whose every block was taken back has no figures (as it would have none in one pass).
  std::erase_if(total.per_tool, [](const auto& entry) {
    const ToolTrimStats& t = entry.second;
    return t.results == 0 && t.result_chars == 0 && t.trimmed == 0 && t.chars_saved == 0 &&
           t.inputs_trimmed == 0;
  });
  return total;
}

TrimStats& TrimStats::operator+=(const TrimStats& o) {
  for (const auto& [tool, t] : o.per_tool) add(per_tool[tool], t, +1);
  results_trimmed += o.results_trimmed;
  inputs_trimmed += o.inputs_trimmed;
  images_replaced += o.images_replaced;
  results_images_only += o.results_images_only;
  chars_saved += o.chars_saved;
  lines += o.lines;
  lines_changed += o.lines_changed;
  lines_unparsed += o.lines_unparsed;
  usage_zeroed += o.usage_zeroed;
  error_markers += o.error_markers;
  return *this;
}

std::set<std::string> Trimmer::tool_names_seen() const {
  std::set<std::string> out;
  for (const auto& [id, name] : impl_->tool_names) out.insert(name);
  return out;
}

}  // namespace ctxkit::trim
