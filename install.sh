#!/usr/bin/env bash
# Installs ctxkit: missing Debian packages, a Release build (in build/, the folder tests/run.sh
# builds its tests in, so that they reuse what was compiled here), the programs, data and skills,
# and the hooks, status line and MCP servers in Claude Code's files (merged, with a backup).
#
#   ./install.sh [--prefix DIR] [--project DIR] [--from-build DIR] [--wrap-status-line | --replace]
#                [--supervise] [--uninstall [--all]] [--deps-only]
#   ./install.sh --plugin DIR [--from-build DIR]
#
#   --prefix DIR   where to install (default ~/.local: programs in DIR/bin)
#   --project DIR  register in DIR/.claude/settings.json, the MCP servers in DIR/.mcp.json, and
#                  install skills in DIR/.claude/skills instead of the user's ~/.claude
#   --from-build DIR  install what an existing CMake build directory holds (brought up to date,
#                  not reconfigured) instead of the build in build/ (CTXKIT_BUILD_DIR)
#   --wrap-status-line  when a status line of yours is set, keep it and show ctxkit's beside it
#                  (ctx-status --wrap '<yours>'; --uninstall puts yours back as it was)
#   --replace      replace a status line of yours, and MCP servers of yours that hold ctxkit's
#                  names (--uninstall puts them back); ctxkit's own entries of another install
#                  (another prefix, the package, the plugin) are taken over without it
#   --supervise    also put a `claude` shell function in ~/.bashrc (and ~/.zshrc) that starts
#                  Claude Code in a terminal under ctx-rollover --supervise, so that rollovers,
#                  workflow actions and [compact] at are carried out without retyping (not with
#                  --project; --uninstall removes it)
#   --uninstall    remove exactly what this install added (settings entries, files)
#   --all          with --uninstall: also remove ctxkit's entries another install made (any
#                  prefix, the package); never yours
#   --deps-only    only install the missing Debian packages (used by the test script)
#   --plugin DIR   write the Claude Code plugin and its local marketplace to DIR, switch to it
#                  (it takes the place of a settings install; the status line stays, from DIR)
#                  and say how to add it to Claude Code
# After the files are in place, `ctx-settings install` does the per-user registration. The build's
# output goes to <build>/install-build.log; the terminal shows the stage, the build's percentage
# and the time so far.
set -euo pipefail

die() { echo "install.sh: error: $*" >&2; exit 1; }

# format_seconds VAR SECONDS: sets VAR to "42 s" or "6 min 05 s" (no subshell: it runs per line).
format_seconds() {
  if [ "$2" -ge 60 ]; then
    printf -v "$1" '%d min %02d s' $(($2 / 60)) $(($2 % 60))
  else
    printf -v "$1" '%d s' "$2"
  fi
}

# build_progress STAGE TTY START: reads a build's output on stdin and shows how far it is, from the
# build's own progress: CMake's Makefile generator prints "[ 42%] Building …", ninja "[12/345] …".
# With TTY=1 one line is redrawn in place ("\r"); otherwise a plain line is printed each time the
# percentage reaches a further tenth, so that a log gets about ten lines, not one per object.
# START is the value of $SECONDS when the stage began.
build_progress() {
  local stage=$1 tty=$2 start=$3 line pct best=-1 tenth=-1 took
  local esc=$'\e'
  local make_re="^(${esc}\\[[0-9;]*m)*\\[ *([0-9]+)%\\]" ninja_re='^\[([0-9]+)/([0-9]+)\]'
  while IFS= read -r line || [ -n "$line" ]; do
    pct=
    if [[ $line =~ $make_re ]]; then
      pct=${BASH_REMATCH[2]}
    elif [[ $line =~ $ninja_re ]] && [ "${BASH_REMATCH[2]}" -gt 0 ]; then
      pct=$((BASH_REMATCH[1] * 100 / BASH_REMATCH[2]))
    fi
    [ -n "$pct" ] || continue
    # Targets report their own share, so a line may show less than one before: never go back.
    [ "$pct" -gt "$best" ] || { [ "$tty" = 1 ] || continue; pct=$best; }
    best=$pct
    if [ "$tty" = 1 ]; then
      format_seconds took $((SECONDS - start))
      printf '\r%-72s' "$stage: $pct% ($took)"
    elif [ $((pct / 10)) -gt "$tenth" ]; then
      tenth=$((pct / 10))
      format_seconds took $((SECONDS - start))
      echo "$stage: $pct% ($took)"
    fi
  done
}

# run_stage STAGE COMMAND…: runs a build step with its output appended to $LOG and its progress
# shown; on failure names the log and shows its last lines, then stops.
run_stage() {
  local stage=$1 start=$SECONDS rc
  shift
  if [ "$TTY" = 1 ]; then printf '%-72s' "$stage"; else echo "$stage (log: $LOG)"; fi
  set +e
  "$@" 2>&1 | tee -a "$LOG" | build_progress "$stage" "$TTY" "$start"
  rc=${PIPESTATUS[0]}
  set -e
  local took
  format_seconds took $((SECONDS - start))
  if [ "$rc" -ne 0 ]; then
    [ "$TTY" = 1 ] && printf '\r%-72s\n' "$stage: failed after $took"
    echo "install.sh: error: $stage failed (exit $rc); the whole log is $LOG, its last lines:" >&2
    tail -n 30 "$LOG" | sed 's/^/  /' >&2
    exit 1
  fi
  if [ "$TTY" = 1 ]; then printf '\r%-72s\n' "$stage: done in $took"; else echo "$stage: done in $took"; fi
}

# Sourced (by the tests of build_progress): the functions only.
if (return 0 2>/dev/null); then return 0; fi

SRC=$(cd "$(dirname "$0")" && pwd)
PREFIX="${HOME}/.local"
PROJECT=""
UNINSTALL=0
ALL=0
DEPS_ONLY=0
FROM_BUILD=""
PLUGIN=""
WRAP_STATUS_LINE=0
REPLACE=0
SUPERVISE=0
TTY=0
[ -t 1 ] && TTY=1

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#*=}"; shift ;;
    --project) [ $# -ge 2 ] || die "--project needs a directory"; PROJECT="$2"; shift 2 ;;
    --project=*) PROJECT="${1#*=}"; shift ;;
    --from-build) [ $# -ge 2 ] || die "--from-build needs a directory"; FROM_BUILD="$2"; shift 2 ;;
    --from-build=*) FROM_BUILD="${1#*=}"; shift ;;
    --plugin) [ $# -ge 2 ] || die "--plugin needs a directory"; PLUGIN="$2"; shift 2 ;;
    --plugin=*) PLUGIN="${1#*=}"; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --all) ALL=1; shift ;;
    --deps-only) DEPS_ONLY=1; shift ;;
    --wrap-status-line) WRAP_STATUS_LINE=1; shift ;;
    --replace) REPLACE=1; shift ;;
    --supervise) SUPERVISE=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if [ -n "$PLUGIN" ] && [ "$UNINSTALL" -eq 1 ]; then
  die "--plugin and --uninstall do not go together (remove the plugin with: claude plugin uninstall ctxkit@ctxkit, then its status line with: $PLUGIN/bin/ctx-settings uninstall)"
fi
[ "$ALL" -eq 0 ] || [ "$UNINSTALL" -eq 1 ] || die "--all goes with --uninstall"
[ "$WRAP_STATUS_LINE" -eq 0 ] || [ "$REPLACE" -eq 0 ] || die "give --wrap-status-line or --replace, not both"
if [ "$SUPERVISE" -eq 1 ]; then
  [ "$UNINSTALL" -eq 0 ] || die "--supervise goes with an install (--uninstall removes the function)"
  [ -z "$PROJECT" ] || die "--supervise is for your own set-up, not with --project"
fi

mkdir -p "$PREFIX" 2>/dev/null || die "cannot create prefix $PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
if [ -n "$PROJECT" ]; then
  [ -d "$PROJECT" ] || die "project directory $PROJECT does not exist"
  PROJECT=$(cd "$PROJECT" && pwd)
fi
DATA="$PREFIX/share/ctxkit"
# ctx-settings keeps its records (one manifest per settings file and per MCP configuration, so a
# user install and project installs can coexist) beside the installed files.
FILES_LIST="$DATA/installed-files.txt"
SETUP_ARGS=(--manifest-dir "$DATA")
PROJECT_ARGS=()
[ -n "$PROJECT" ] && PROJECT_ARGS+=(--project "$PROJECT")
INSTALL_ARGS=()
[ "$WRAP_STATUS_LINE" -eq 1 ] && INSTALL_ARGS+=(--wrap-status-line)
[ "$REPLACE" -eq 1 ] && INSTALL_ARGS+=(--replace)
[ "$SUPERVISE" -eq 1 ] && INSTALL_ARGS+=(--supervise)

PACKAGES=(build-essential cmake pkg-config nlohmann-json3-dev libtomlplusplus-dev libsqlite3-dev
          libfmt-dev libyaml-cpp-dev libcli11-dev libsimdjson-dev libgtest-dev libbenchmark-dev)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: these Debian packages are missing; install them as root, then run this again:" >&2
    echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ "$UNINSTALL" -eq 1 ]; then
  UNINSTALL_ARGS=()
  [ "$ALL" -eq 1 ] && UNINSTALL_ARGS+=(--all)
  if [ -x "$PREFIX/bin/ctx-settings" ]; then
    "$PREFIX/bin/ctx-settings" uninstall "${SETUP_ARGS[@]}" ${PROJECT_ARGS[@]+"${PROJECT_ARGS[@]}"} \
      ${UNINSTALL_ARGS[@]+"${UNINSTALL_ARGS[@]}"}
  else
    echo "install.sh: $PREFIX/bin/ctx-settings not found; settings left as they are" >&2
  fi
  if [ -f "$FILES_LIST" ] && ! ls "$DATA"/settings-manifest*.json >/dev/null 2>&1; then
    # No settings file refers to this installation any more: remove its files.
    while IFS= read -r f || [ -n "$f" ]; do
      if [ -f "$f" ] || [ -L "$f" ]; then rm -f -- "$f"; fi
    done < "$FILES_LIST"
    rm -f -- "$FILES_LIST"
    find "$DATA" -depth -type d -empty -delete 2>/dev/null || true
    echo "removed the ctxkit files under $PREFIX"
  elif [ -f "$FILES_LIST" ]; then
    echo "other settings files still use $PREFIX/bin; its files were kept"
  fi
  echo "ctxkit uninstalled (state in \${XDG_STATE_HOME:-~/.local/state}/ctxkit is kept)"
  exit 0
fi

install_packages
[ "$DEPS_ONLY" -eq 1 ] && exit 0

if [ -n "$FROM_BUILD" ]; then
  [ -f "$FROM_BUILD/CMakeCache.txt" ] || die "$FROM_BUILD is not a CMake build directory"
  BUILD=$(cd "$FROM_BUILD" && pwd)
  LOG="$BUILD/install-build.log"
  : > "$LOG"
else
  # One build for install.sh and tests/run.sh: Release when it is made here; a build folder that
  # exists already keeps its settings (only an instrumented one is refused: it is not for installing).
  BUILD="${CTXKIT_BUILD_DIR:-$SRC/build}"
  mkdir -p "$BUILD" 2>/dev/null || die "cannot create the build folder $BUILD"
  BUILD=$(cd "$BUILD" && pwd)
  LOG="$BUILD/install-build.log"
  : > "$LOG"
  if [ -f "$BUILD/CMakeCache.txt" ]; then
    if grep -qE '^CTXKIT_(SANITIZE_[A-Z]+|COVERAGE|FUZZ):BOOL=ON$' "$BUILD/CMakeCache.txt"; then
      die "$BUILD is an instrumented build (sanitizer, coverage or fuzzing); set CTXKIT_BUILD_DIR to another folder"
    fi
    run_stage "configuring the build" cmake -S "$SRC" -B "$BUILD"
  else
    run_stage "configuring the build" cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_TESTS=OFF
  fi
fi

if [ -n "$PLUGIN" ]; then
  if [ -e "$PLUGIN" ] && [ -n "$(ls -A "$PLUGIN" 2>/dev/null)" ] &&
     ! grep -qs '"name": "ctxkit"' "$PLUGIN/.claude-plugin/plugin.json"; then
    die "$PLUGIN is not empty and holds no ctxkit plugin; choose another directory"
  fi
  run_stage "building the plugin" cmake --build "$BUILD" -j"$(nproc)" --target plugin
  mkdir -p "$PLUGIN"
  PLUGIN=$(cd "$PLUGIN" && pwd)
  find "$PLUGIN" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +
  cp -a "$BUILD/plugin/." "$PLUGIN/"
  if command -v strip >/dev/null; then strip --strip-unneeded "$PLUGIN"/bin/* 2>/dev/null || true; fi
  # In one piece, as `cmake --install` leaves them (cmake/write-whole.sh says why).
  sh "$SRC/cmake/write-whole.sh" "$PLUGIN"/bin/* || echo "install.sh: note: the programs start a little slower" >&2
  echo "wrote the ctxkit plugin and its local marketplace to $PLUGIN"
  # The plugin takes the place of a settings install (the client would run both sets of hooks):
  # its part of the set-up removes ctxkit's hooks, MCP servers and skills from the settings and
  # points the status line (which a plugin cannot set) at the plugin's ctx-status.
  "$PLUGIN/bin/ctx-settings" install --status-line-only ${PROJECT_ARGS[@]+"${PROJECT_ARGS[@]}"} \
    ${INSTALL_ARGS[@]+"${INSTALL_ARGS[@]}"}
  echo "add it to Claude Code with:"
  echo "  claude plugin marketplace add $PLUGIN"
  echo "  claude plugin install ctxkit@ctxkit"
  exit 0
fi

run_stage "building the programs" cmake --build "$BUILD" -j"$(nproc)" --target programs
run_stage "installing into $PREFIX" cmake --install "$BUILD" --prefix "$PREFIX" --strip
{ cat "$BUILD/install_manifest.txt"; echo; echo "$FILES_LIST"; } | grep -v '^$' > "$FILES_LIST.new"
mv "$FILES_LIST.new" "$FILES_LIST"
echo "installed the programs in $PREFIX/bin"

# The per-user (or per-project) step: hooks, status line, the MCP servers and the skills. ctxkit's
# entries of another install (another prefix, the package, the plugin) are taken over.
"$PREFIX/bin/ctx-settings" install "${SETUP_ARGS[@]}" ${PROJECT_ARGS[@]+"${PROJECT_ARGS[@]}"} \
  ${INSTALL_ARGS[@]+"${INSTALL_ARGS[@]}"}
case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) echo "note: $PREFIX/bin is not on PATH; the hooks use absolute paths, add it to PATH to run the tools by name" ;;
esac
echo "ctxkit installed; check it with: $PREFIX/bin/ctx-doctor"
