#!/usr/bin/env bash
# Prints the path of the Claude Code CLI the live checks drive, installing it first when missing.
#
#   tests/live/install_client.sh            # -> .../claude-2.1.197/node_modules/.bin/claude
#   CLAUDE_BIN=$(tests/live/install_client.sh)
#
# CLAUDE_BIN set and executable: printed as is, nothing installed.
# Otherwise @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION (default: the oldest supported release,
# "oldest" in cmake/claude-code-range.txt) is installed with npm into
# ${CTXKIT_LIVE_CACHE:-$HOME/.cache/ctxkit-live}/claude-<version>, once: npm works in a fresh folder
# beside it, which is renamed into place only when the installed client answers --version with the
# wanted version, so an interrupted install is never mistaken for a good one.
# Progress goes to stderr, the path alone to stdout. Exit 1 with one line on stderr on failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION="${CLAUDE_CODE_VERSION:-$(awk '$1 == "oldest" { print $2 }' "$HERE/../../cmake/claude-code-range.txt")}"

if [ -n "${CLAUDE_BIN:-}" ]; then
  if [ -x "$CLAUDE_BIN" ]; then
    printf '%s\n' "$CLAUDE_BIN"
    exit 0
  fi
  echo "install_client.sh: CLAUDE_BIN=$CLAUDE_BIN is not an executable file" >&2
  exit 1
fi

CACHE="${CTXKIT_LIVE_CACHE:-$HOME/.cache/ctxkit-live}"
DEST="$CACHE/claude-$VERSION"
BIN="$DEST/node_modules/.bin/claude"

reports_version() {  # $1: binary; true when `claude --version` names $VERSION
  local home
  home=$(mktemp -d)
  local out
  out=$(HOME="$home" DISABLE_AUTOUPDATER=1 "$1" --version 2>/dev/null || true)
  rm -rf "$home"
  case "$out" in "$VERSION "* | "$VERSION") return 0 ;; *) return 1 ;; esac
}

if [ -x "$BIN" ] && reports_version "$BIN"; then
  printf '%s\n' "$BIN"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "install_client.sh: npm not found (Debian: apt-get install nodejs npm), or set CLAUDE_BIN" >&2
  exit 1
fi

mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/.claude-$VERSION.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "installing @anthropic-ai/claude-code@$VERSION into $DEST" >&2
printf '{"name":"ctxkit-live-client","private":true}\n' > "$WORK/package.json"
if ! npm install --prefix "$WORK" --no-audit --no-fund --loglevel=error \
     "@anthropic-ai/claude-code@$VERSION" >&2; then
  echo "install_client.sh: npm install @anthropic-ai/claude-code@$VERSION failed" >&2
  exit 1
fi
if ! reports_version "$WORK/node_modules/.bin/claude"; then
  echo "install_client.sh: the installed client does not report version $VERSION" >&2
  exit 1
fi
chmod 755 "$WORK"
rm -rf "$DEST"
mv "$WORK" "$DEST"
trap - EXIT
printf '%s\n' "$BIN"
