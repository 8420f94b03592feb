#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ctxkit::report {

// One context reading: a main-chain response (or a subagent's), or the estimate a compaction
// boundary gives (its postTokens).
struct Point {
  int64_t at_ms = 0;   // the line's timestamp (Unix ms)
  int64_t tokens = 0;  // input + cache creation + cache read
  uint64_t line = 0;   // 1-based line of the transcript
};

// Something that happened to a session, drawn on the time axis and listed in the table.
struct Event {
  int64_t at_ms = 0;  // 0: the time is unknown (drawn at the session's start)
  // reminder, compaction, trim, rollover, workflow, run, cap (a tool output ctx-cap kept out of
  // the window), pins (what a compaction kept of the pins)
  std::string kind;
  std::string label;    // a few characters, on the chart ("R2 78%", "compact 180k→21k")
  std::string detail;   // the table's words
  std::string session;  // the session id (a subagent's: "<session>/agent-<id>")
  uint64_t line = 0;    // the transcript line, 0 when the event is not in the transcript
  std::optional<int64_t> tokens_before, tokens_after;  // a compaction's
  std::optional<int64_t> tokens_freed;                 // a trim's
  int tier = 0;           // a reminder's tier (1 warn, 2 recommend, 3 urgent)
  bool handover = false;  // a trim or rollover that ends one session of a line and starts the next
};

// A subagent's readings, drawn as a thin lane of its own under the main chart.
struct Lane {
  std::string name;  // "agent-<id>"
  std::vector<Point> points;
};

// One session of the report, with the figures its percentages are measured against.
struct SessionPart {
  std::string session_id;
  std::string transcript;  // its path
  std::string model, client_version, cwd;
  int number = 0;             // its number in a line of work (0: not in one)
  int64_t window = 0;         // the context window
  int64_t denominator = 0;    // what percentages are of (the usable part or the window)
  std::string basis;          // "usable" or "window"
  int64_t point_tokens = 0;   // where the client compacts (0: unknown or never)
  std::string point_words;    // why (context::describe_point)
  std::vector<Point> points;  // main-chain readings, oldest first
  std::vector<Lane> subagents;
  uint64_t lines = 0;                // lines read
  int64_t start_ms = 0, end_ms = 0;  // first and last timestamp seen (0: none)
  std::string end_reason;            // trim, rollover, completed, or empty (open)
  std::vector<std::string> missing;  // what could not be shown, in words
};

// What a page shows: one session, or the sessions of a line of work end to end.
struct Timeline {
  std::string title;
  bool lineage = false;
  std::vector<SessionPart> sessions;
  std::vector<Event> events;       // every event, oldest first
  std::vector<std::string> notes;  // what is missing for the whole report, in words
};

// The percentage of `denominator` that `tokens` is (floor, as the status line shows it); 0 for
// no denominator.
int64_t percent_of(int64_t tokens, int64_t denominator);

// At most `max_points` of `points` (at least 4): each of max_points/2 runs of consecutive points
// keeps its lowest and its highest in their order, so peaks and the drops of a compaction stay;
// the first and the last point are always kept. Fewer points are returned as they are.
std::vector<Point> downsample(const std::vector<Point>& points, size_t max_points);

// Sorts the events by time (a stable sort: the order found breaks ties).
void sort_events(std::vector<Event>& events);

// The timeline as JSON: sessions with their figures and (downsampled) readings, the events and
// the notes; the same data the page draws.
nlohmann::ordered_json to_json(const Timeline& timeline, size_t max_points);

// "SESSION:LINE" for an event in a transcript, "SESSION" for one that is not.
std::string citation(const Event& event);

}  // namespace ctxkit::report
