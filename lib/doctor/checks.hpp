#pragma once

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"

namespace ctxkit::doctor {

enum class Status { Ok, Warning, Fault };
// "ok", "warning", "fault".
const char* status_word(Status s);

// One thing ctx-doctor found: its area ("programs", "hooks", "state", ...), how it stands, what
// it says, and what to do ("" when it is ok).
struct Finding {
  std::string area;
  Status status = Status::Ok;
  std::string message;
  std::string fix;
};

// What the checks look at.
struct DoctorInputs {
  util::Env env;
  core::Config cfg;
  core::Locations loc;
  std::filesystem::path settings_path;     // the client's settings.json
  std::filesystem::path claude_json_path;  // the file with the user's MCP servers
  // Whether the two files above are the user's own (not given on the command line): the fix
  // then names the whole set-up rather than one file's.
  bool default_files = true;
  std::filesystem::path bin_dir;  // where this install's programs are
  std::string version;            // this ctxkit's version, as each program answers --version
  std::chrono::milliseconds timeout{5000};  // how long a program may take to answer
};

// The areas ctx-doctor looks at, in the order it reports them.
enum class Area {
  Programs,    // each program answers --version with this version
  Install,     // which install is active; its hooks, status line, MCP servers; last runs
  Claude,      // the client and its version against the supported range
  Compaction,  // where this client compacts the current model
  State,       // the state folder and databases: mode, owner, integrity, schema version
  Archive,     // the archive and its search index
  Cap,         // the live cap of large outputs (after Claude: it needs the client's version)
  Config,      // the configuration's warnings and errors
};

// The findings of `areas`, in that order. Nothing is created or changed: databases are opened
// read-only, programs are only asked --version or an MCP initialize.
std::vector<Finding> check(const DoctorInputs& in, std::initializer_list<Area> areas);
// Every area, in order.
std::vector<Finding> check_everything(const DoctorInputs& in);

struct Verdict {
  int faults = 0, warnings = 0;
};
Verdict verdict(const std::vector<Finding>& findings);

// The findings one line each ("FAULT area: message → fix"), then "healthy (N warnings)" or "N
// faults, M warnings".
std::string findings_text(const std::vector<Finding>& findings);
// The findings as JSON: {"healthy", "faults", "warnings", "findings": [{"area", "status",
// "message", "fix"?}]}.
std::string findings_json(const std::vector<Finding>& findings);

}  // namespace ctxkit::doctor
