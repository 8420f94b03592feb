#!/usr/bin/env bash
# Installs ctxkit: missing Debian packages, a Release build (in build/, the folder tests/run.sh
# builds its tests in, so that they reuse what was compiled here), the programs, data and skills,
# and the hooks and status line in Claude Code's settings (merged, with a backup).
#
#   ./install.sh [--prefix DIR] [--project DIR] [--from-build DIR] [--wrap-status-line]
#                [--uninstall] [--deps-only]
#   ./install.sh --plugin DIR [--from-build DIR]
#
#   --prefix DIR   where to install (default ~/.local: programs in DIR/bin)
#   --project DIR  register in DIR/.claude/settings.json, the MCP server in DIR/.mcp.json, and
#                  install skills in DIR/.claude/skills instead of the user's ~/.claude
#   --from-build DIR  install what an existing CMake build directory holds (brought up to date,
#                  not reconfigured) instead of the build in build/ (CTXKIT_BUILD_DIR)
#   --wrap-status-line  when a status line of yours is set, keep it and show ctxkit's beside it
#                  (ctx-status --wrap '<yours>'; --uninstall puts yours back as it was)
#   --uninstall    remove exactly what an earlier install added (settings entries, files)
#   --deps-only    only install the missing Debian packages (used by the test script)
#   --plugin DIR   write the Claude Code plugin and its local marketplace to DIR instead, and
#                  say how to add it to Claude Code (settings.json is not touched)
# After the files are in place, `ctx-settings install` does the per-user registration.
set -euo pipefail

SRC=$(cd "$(dirname "$0")" && pwd)
PREFIX="${HOME}/.local"
PROJECT=""
UNINSTALL=0
DEPS_ONLY=0
FROM_BUILD=""
PLUGIN=""
WRAP_STATUS_LINE=0

die() { echo "install.sh: error: $*" >&2; exit 1; }

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
    --deps-only) DEPS_ONLY=1; shift ;;
    --wrap-status-line) WRAP_STATUS_LINE=1; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if [ -n "$PLUGIN" ] && [ "$UNINSTALL" -eq 1 ]; then
  die "--plugin and --uninstall do not go together (remove the plugin with: claude plugin uninstall ctxkit@ctxkit)"
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
[ -n "$PROJECT" ] && SETUP_ARGS+=(--project "$PROJECT")
INSTALL_ARGS=()
[ "$WRAP_STATUS_LINE" -eq 1 ] && INSTALL_ARGS+=(--wrap-status-line)

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
  if [ -x "$PREFIX/bin/ctx-settings" ]; then
    "$PREFIX/bin/ctx-settings" uninstall "${SETUP_ARGS[@]}"
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
else
  # One build for install.sh and tests/run.sh: Release when it is made here; a build folder that
  # exists already keeps its settings (only an instrumented one is refused: it is not for installing).
  BUILD="${CTXKIT_BUILD_DIR:-$SRC/build}"
  if [ -f "$BUILD/CMakeCache.txt" ]; then
    if grep -qE '^CTXKIT_(SANITIZE_[A-Z]+|COVERAGE|FUZZ):BOOL=ON$' "$BUILD/CMakeCache.txt"; then
      die "$BUILD is an instrumented build (sanitizer, coverage or fuzzing); set CTXKIT_BUILD_DIR to another folder"
    fi
    cmake -S "$SRC" -B "$BUILD" >/dev/null
  else
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_TESTS=OFF >/dev/null
  fi
fi

if [ -n "$PLUGIN" ]; then
  cmake --build "$BUILD" -j"$(nproc)" --target ctx-settings >/dev/null
  # One install at a time: a settings install and the plugin would run every hook twice.
  active=$("$BUILD/hooks/ctx-settings" active)
  if printf '%s\n' "$active" | grep -q '^settings:'; then
    printf '%s\n' "$active" | grep '^settings:' | sed 's/^/  /' >&2
    die "ctxkit is registered in settings.json (the settings install is active). Switch with
  ./install.sh --uninstall   (or: ctx-settings uninstall)
then run ./install.sh --plugin $PLUGIN again"
  fi
  if [ -e "$PLUGIN" ] && [ -n "$(ls -A "$PLUGIN" 2>/dev/null)" ] &&
     ! grep -qs '"name": "ctxkit"' "$PLUGIN/.claude-plugin/plugin.json"; then
    die "$PLUGIN is not empty and holds no ctxkit plugin; choose another directory"
  fi
  cmake --build "$BUILD" -j"$(nproc)" --target plugin >/dev/null
  mkdir -p "$PLUGIN"
  PLUGIN=$(cd "$PLUGIN" && pwd)
  find "$PLUGIN" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +
  cp -a "$BUILD/plugin/." "$PLUGIN/"
  if command -v strip >/dev/null; then strip --strip-unneeded "$PLUGIN"/bin/* 2>/dev/null || true; fi
  # In one piece, as `cmake --install` leaves them (cmake/write-whole.sh says why).
  sh "$SRC/cmake/write-whole.sh" "$PLUGIN"/bin/* || echo "install.sh: note: the programs start a little slower" >&2
  echo "wrote the ctxkit plugin and its local marketplace to $PLUGIN"
  echo "add it to Claude Code with:"
  echo "  claude plugin marketplace add $PLUGIN"
  echo "  claude plugin install ctxkit@ctxkit"
  echo "a plugin cannot set the status line; to show the context figure there, run:"
  echo "  $PLUGIN/bin/ctx-settings install --status-line-only"
  exit 0
fi

cmake --build "$BUILD" -j"$(nproc)" --target programs >/dev/null
cmake --install "$BUILD" --prefix "$PREFIX" --strip >/dev/null
{ cat "$BUILD/install_manifest.txt"; echo; echo "$FILES_LIST"; } | grep -v '^$' > "$FILES_LIST.new"
mv "$FILES_LIST.new" "$FILES_LIST"
echo "installed the programs in $PREFIX/bin"

# The per-user (or per-project) step: hooks, status line, the MCP server and the skills.
"$PREFIX/bin/ctx-settings" install "${SETUP_ARGS[@]}" ${INSTALL_ARGS[@]+"${INSTALL_ARGS[@]}"}
case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) echo "note: $PREFIX/bin is not on PATH; the hooks use absolute paths, add it to PATH to run the tools by name" ;;
esac
echo "ctxkit installed; check it with: $PREFIX/bin/ctx-remind --show-config"
