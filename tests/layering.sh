#!/usr/bin/env bash
# Fails when a file under lib/ includes a folder its own folder may not, or when sqlite3.h,
# toml++ or yaml-cpp is included outside the one folder that owns it. lib/ is a public include
# folder, so `#include <store/...>` counts as much as `#include "store/..."`. The rule
# (ARCHITECTURE.md), each folder with the folders it may include, which are the ones it does:
#
#   hooks -> apps -> {report, runner, mcp, rollover, trim, ...}
#   runner -> workflow, context, claude, store, core, util      mcp -> util
#   workflow -> context, store, core, util     trim -> archive, context, claude, store, core, util
#   rollover -> pins, archive, context, claude, store, core, util      pins -> context, store, core, util
#   archive -> claude, store, core, util
#   context -> claude, core, util      store -> core, util      claude -> core, util      core -> util
#   report -> archive, context, claude, store, core, util      install -> claude, core, util
#   doctor -> install, archive, context, claude, store, core, util
#
# Pure modules (context/reminder, trim/trimmer, trim/json_text, report/timeline and html_page, the
# workflow state, gate and template, the claude/ parsers) include neither store/ nor util/process.
# The kinds of break,
# each proven by layering_selftest.sh: a source file directly in lib/, a folder with no rule, an
# include of a folder not allowed (either spelling), a pure module that includes store/ or
# util/process, sqlite3.h outside store/, toml++ outside core/config.cpp, yaml-cpp outside
# workflow/, a program in hooks/ that includes more than apps/.
set -euo pipefail
LIB="${1:-$(cd "$(dirname "$0")/../lib" && pwd)}"

allowed() {  # folder -> folders it may include (besides itself)
  case "$1" in
    util)     echo "" ;;
    core)     echo "util" ;;
    claude)   echo "core util" ;;
    store)    echo "core util" ;;
    context)  echo "claude core util" ;;
    archive)  echo "claude store core util" ;;
    trim)     echo "archive context claude store core util" ;;
    workflow) echo "context store core util" ;;
    pins)     echo "context store core util" ;;
    rollover) echo "pins archive context claude store core util" ;;
    mcp)      echo "util" ;;
    runner)   echo "workflow context claude store core util" ;;
    report)   echo "archive context claude store core util" ;;
    install)  echo "claude core util" ;;
    doctor)   echo "install archive context claude store core util" ;;
    apps)     echo "report runner mcp workflow rollover pins trim install doctor archive context claude store core util" ;;
    *)        echo "?" ;;
  esac
}
# The folders of lib/: an include <x/...> of another x (<sys/stat.h>, <fmt/core.h>) is not ours.
OURS=" util core claude store context archive trim workflow pins rollover mcp runner report install doctor apps "
# Files that must stay pure: no store/, no util/process.
PURE='^(context/reminder|report/timeline|report/html_page|trim/trimmer|trim/json_text|workflow/workflow_state|workflow/step_gate|workflow/workflow_template|claude/[a-z_]+)\.(hpp|cpp)$'

status=0
while IFS= read -r -d '' file; do
  rel="${file#"$LIB"/}"
  folder="${rel%%/*}"
  [ "$folder" = "$rel" ] && { echo "layering: $rel: a source file directly in lib/ (put it in a folder)"; status=1; continue; }
  ok=" $(allowed "$folder") $folder "
  [ "$ok" = " ? $folder " ] && { echo "layering: $rel: folder '$folder' has no rule in tests/layering.sh"; status=1; continue; }
  lineno=0
  while IFS= read -r line; do
    lineno=$((lineno + 1))
    case "$line" in
      \#include*) ;;
      *) continue ;;
    esac
    if [[ "$line" =~ ^#include\ *[\"\<]([a-z_]+)/ ]] && [[ "$OURS" == *" ${BASH_REMATCH[1]} "* ]]; then
      dep="${BASH_REMATCH[1]}"
      if [[ "$ok" != *" $dep "* ]]; then
        echo "layering: $rel:$lineno: '$folder' may not include '$dep/' ($line)"; status=1
      fi
      if [[ "$rel" =~ $PURE ]] && { [ "$dep" = store ] || [[ "$line" =~ [\"\<]util/process\.hpp[\"\>] ]]; }; then
        echo "layering: $rel:$lineno: a pure module may not include $dep/ ($line)"; status=1
      fi
    fi
    if [[ "$line" =~ \<sqlite3\.h\> ]] && [ "$folder" != store ]; then
      echo "layering: $rel:$lineno: only store/ includes sqlite3.h"; status=1
    fi
    if [[ "$line" =~ \<toml\+\+/ ]] && [ "$rel" != core/config.cpp ]; then
      echo "layering: $rel:$lineno: only core/config.cpp includes toml++"; status=1
    fi
    if [[ "$line" =~ \<yaml-cpp/ ]] && [ "$folder" != workflow ]; then
      echo "layering: $rel:$lineno: only workflow/ includes yaml-cpp"; status=1
    fi
  done < "$file"
done < <(find "$LIB" -name '*.[ch]pp' -print0)
# Programs in hooks/ are thin mains: they include apps/ and nothing else of ours.
HOOKS="$(dirname "$LIB")/hooks"
if [ -d "$HOOKS" ]; then
  while IFS= read -r -d '' file; do
    while IFS= read -r line; do
      if [[ "$line" =~ ^#include\ *[\"\<]([a-z_]+)/ ]] && [[ "$OURS" == *" ${BASH_REMATCH[1]} "* ]] && [ "${BASH_REMATCH[1]}" != apps ]; then
        echo "layering: hooks/$(basename "$file"): a program includes only apps/ ($line)"; status=1
      fi
    done < "$file"
  done < <(find "$HOOKS" -name '*.cpp' -print0)
fi
[ $status -eq 0 ] && echo "layering: ok ($(find "$LIB" -name '*.[ch]pp' | wc -l) files)"
exit $status
