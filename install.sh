#!/usr/bin/env bash
# Installs ctxkit: missing Debian packages, a Release build, the programs, data and skills, and
# the hooks and status line in Claude Code's settings (merged, with a backup).
#
#   ./install.sh [--prefix DIR] [--project DIR] [--from-build DIR] [--uninstall] [--deps-only]
#
#   --prefix DIR   where to install (default ~/.local: programs in DIR/bin)
#   --project DIR  register in DIR/.claude/settings.json, the MCP server in DIR/.mcp.json, and
#                  install skills in DIR/.claude/skills instead of the user's ~/.claude
#   --from-build DIR  install what an existing CMake build directory holds (brought up to date,
#                  not reconfigured) instead of making a Release build of its own
#   --uninstall    remove exactly what an earlier install added (settings entries, files)
#   --deps-only    only install the missing Debian packages (used by the test script)
set -euo pipefail

SRC=$(cd "$(dirname "$0")" && pwd)
PREFIX="${HOME}/.local"
PROJECT=""
UNINSTALL=0
DEPS_ONLY=0
FROM_BUILD=""

die() { echo "install.sh: error: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#*=}"; shift ;;
    --project) [ $# -ge 2 ] || die "--project needs a directory"; PROJECT="$2"; shift 2 ;;
    --project=*) PROJECT="${1#*=}"; shift ;;
    --from-build) [ $# -ge 2 ] || die "--from-build needs a directory"; FROM_BUILD="$2"; shift 2 ;;
    --from-build=*) FROM_BUILD="${1#*=}"; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --deps-only) DEPS_ONLY=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

mkdir -p "$PREFIX" 2>/dev/null || die "cannot create prefix $PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
if [ -n "$PROJECT" ]; then
  [ -d "$PROJECT" ] || die "project directory $PROJECT does not exist"
  PROJECT=$(cd "$PROJECT" && pwd)
  CLAUDE_DIR="$PROJECT/.claude"
else
  CLAUDE_DIR="${CLAUDE_CONFIG_DIR:-$HOME/.claude}"
fi
SETTINGS="$CLAUDE_DIR/settings.json"
DATA="$PREFIX/share/ctxkit"
# One manifest per settings file, so a user install and project installs can coexist.
MANIFEST="$DATA/settings-manifest$(printf '%s' "$SETTINGS" | tr -c 'A-Za-z0-9' '-').json"
FILES_LIST="$DATA/installed-files.txt"
# The workflow MCP server, as `claude mcp add --scope user` (~/.claude.json, or
# $CLAUDE_CONFIG_DIR/.claude.json) or `--scope project` (DIR/.mcp.json) registers it.
if [ -n "$PROJECT" ]; then
  MCP_CONFIG="$PROJECT/.mcp.json"
else
  MCP_CONFIG="${CLAUDE_CONFIG_DIR:-$HOME}/.claude.json"
fi
MCP_MANIFEST="$DATA/mcp-manifest$(printf '%s' "$MCP_CONFIG" | tr -c 'A-Za-z0-9' '-').json"

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
  if [ -x "$PREFIX/bin/ctx-workflow-mcp" ]; then
    "$PREFIX/bin/ctx-workflow-mcp" unregister --config "$MCP_CONFIG" --manifest "$MCP_MANIFEST"
  fi
  if [ -x "$PREFIX/bin/ctx-settings" ]; then
    "$PREFIX/bin/ctx-settings" uninstall --settings "$SETTINGS" --bin-dir "$PREFIX/bin" --manifest "$MANIFEST"
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
  if [ -f "$CLAUDE_DIR/skills/.ctxkit-installed" ]; then
    while IFS= read -r f || [ -n "$f" ]; do
      if [ -n "$f" ]; then rm -f -- "$f"; fi
    done < "$CLAUDE_DIR/skills/.ctxkit-installed"
    rm -f -- "$CLAUDE_DIR/skills/.ctxkit-installed"
    find "$CLAUDE_DIR/skills" -depth -type d -empty -delete 2>/dev/null || true
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
  BUILD="${CTXKIT_BUILD_DIR:-$SRC/build-release}"
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
cmake --install "$BUILD" --prefix "$PREFIX" --strip >/dev/null
{ cat "$BUILD/install_manifest.txt"; echo; echo "$FILES_LIST"; } | grep -v '^$' > "$FILES_LIST.new"
mv "$FILES_LIST.new" "$FILES_LIST"
echo "installed the programs in $PREFIX/bin"

# Skills: one folder per skill with a SKILL.md, copied into Claude Code's skills folder.
if compgen -G "$SRC/skills/*/SKILL.md" >/dev/null; then
  mkdir -p "$CLAUDE_DIR/skills"
  list="$CLAUDE_DIR/skills/.ctxkit-installed"
  : > "$list.new"
  for dir in "$SRC"/skills/*/; do
    name=$(basename "$dir")
    [ -f "$dir/SKILL.md" ] || continue
    mkdir -p "$CLAUDE_DIR/skills/$name"
    for f in "$dir"*; do
      sed "s|@CTXKIT_BIN@|$PREFIX/bin|g" "$f" > "$CLAUDE_DIR/skills/$name/$(basename "$f")"
      echo "$CLAUDE_DIR/skills/$name/$(basename "$f")" >> "$list.new"
    done
    echo "installed skill /$name"
  done
  mv "$list.new" "$list"
fi

"$PREFIX/bin/ctx-settings" install --settings "$SETTINGS" --bin-dir "$PREFIX/bin" --manifest "$MANIFEST"
"$PREFIX/bin/ctx-workflow-mcp" register --config "$MCP_CONFIG" --manifest "$MCP_MANIFEST"
case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) echo "note: $PREFIX/bin is not on PATH; the hooks use absolute paths, add it to PATH to run the tools by name" ;;
esac
echo "ctxkit installed; check it with: $PREFIX/bin/ctx-remind --show-config"
