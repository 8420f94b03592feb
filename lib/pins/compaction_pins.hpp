#pragma once

#include <optional>
#include <string>

#include "core/locations.hpp"
#include "pins/pin_scope.hpp"
#include "store/pin_views.hpp"
#include "store/state_store.hpp"

namespace ctxkit::pins {

// What pins do around one compaction, in the order the client runs its hooks.

// Before it (PreCompact): the instructions for the summarizer (the client puts a PreCompact
// hook's plain stdout under "Additional Instructions:"), leaving out the pins that
// `custom_instructions` (what `/compact <focus>` was given: the supervisor's focus is the pins)
// names already. Empty when there is nothing to say.
std::string summarizer_instructions(const store::PinView& view,
                                    const std::string& custom_instructions);

// After it (PostCompact): each pin of `scope` checked against the compaction's `summary`, the
// check recorded (`trigger`: "manual", "auto", or empty when the client did not say); when some
// were left out, the text that re-states them is left for the session's next prompt and counted
// as restored with it. Returns a note when something went wrong, else "".
std::string check_after_compaction(store::StateStore& store, const core::Locations& loc,
                                   const PinScope& scope, const std::string& summary,
                                   const std::string& trigger);

// The next prompt (UserPromptSubmit): the text that re-states the pins the last compaction of
// `session_id` left out, once (of prompts at once, exactly one takes it); nullopt on every other
// prompt, which costs one failed rename and opens no database. `note` says what went wrong.
std::optional<std::string> take_pins_to_restore(const core::Locations& loc,
                                                const std::string& session_id, std::string& note);

}  // namespace ctxkit::pins
