#!/usr/bin/env bash
# The Debian package end to end, on this machine (as root; it installs into the real /usr, so it
# is opt-in: ctest label `package`, registered only with -DCTXKIT_TEST_PACKAGE=ON):
#   cpack -G DEB builds ctxkit_<version>_<arch>.deb; its contents are the programs in /usr/bin and
#   the data in /usr/share/ctxkit, nothing else (no tests, no benchmarks); its dependencies are
#   runtime libraries only; `apt-get install ./ctxkit_….deb` installs it; `ctx-remind --version`
#   runs; `ctx-settings install` does the per-user step from the installed data in a throw-away
#   HOME; `apt-get remove ctxkit` leaves none of its files behind.
# Usage: check_deb.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: installing the package needs root"; exit 77; }
if dpkg-query -W -f='${Status}' ctxkit 2>/dev/null | grep -q "install ok installed"; then
  echo "skipped: a ctxkit package is already installed here; this check would remove it"
  exit 77
fi
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
ARCH=$(dpkg --print-architecture)
DEB="$BUILD/ctxkit_${VERSION}_${ARCH}.deb"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

rm -f "$DEB"
(cd "$BUILD" && cpack -G DEB >"$T/cpack.log" 2>&1) || { cat "$T/cpack.log" >&2; fail "cpack -G DEB"; }
[ -f "$DEB" ] || fail "no $DEB after cpack (got: $(ls "$BUILD"/*.deb 2>/dev/null))"
echo "built $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KiB)"

# Contents: programs in /usr/bin, data in /usr/share/ctxkit, nothing else.
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' > "$T/contents"
grep -v '/$' "$T/contents" > "$T/files"
for p in ctx-remind ctx-status ctx-settings ctx-trim ctx-workflow-mcp ctx-archive-mcp ctx-gate ctx-session-hook; do
  grep -qx "/usr/bin/$p" "$T/files" || fail "/usr/bin/$p is not in the package"
done
for f in /usr/share/ctxkit/skills/trim/SKILL.md /usr/share/ctxkit/workflows/feature.yaml \
         /usr/share/ctxkit/prompts/continuation.md /usr/share/ctxkit/settings-snippet.json; do
  grep -qx "$f" "$T/files" || fail "$f is not in the package"
done
stray=$(grep -v -e '^/usr/bin/ctx-[a-z-]*$' -e '^/usr/share/ctxkit/' "$T/files" || true)
[ -z "$stray" ] || fail "files outside /usr/bin/ctx-* and /usr/share/ctxkit: $stray"
tb='(^|/)(unit_tests|e2e_tests|test_[^/]*|bench[^/]*)$'
grep -qE "$tb" "$T/files" && fail "test or benchmark files in the package: $(grep -E "$tb" "$T/files")"
echo "contents: $(wc -l < "$T/files") files, programs in /usr/bin, data in /usr/share/ctxkit"

# Dependencies: runtime libraries from dpkg-shlibdeps, no development packages.
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "Depends: $DEPENDS"
printf '%s' "$DEPENDS" | grep -q 'libc6' || fail "Depends lacks libc6 (dpkg-shlibdeps did not run?)"
printf '%s' "$DEPENDS" | grep -q -- '-dev' && fail "Depends names a development package"
[ "$(dpkg-deb -f "$DEB" Package)" = ctxkit ] || fail "package name"
[ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ] || fail "package version"

# Install, run, per-user step, remove.
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "$DEB" >"$T/apt.log" 2>&1 || { cat "$T/apt.log" >&2; fail "apt-get install $DEB"; }
while read -r f; do [ -e "$f" ] || fail "$f missing after the install"; done < "$T/files"
[ "$(/usr/bin/ctx-remind --version)" = "ctx-remind $VERSION" ] || fail "ctx-remind --version: $(/usr/bin/ctx-remind --version 2>&1)"
echo "installed: $(/usr/bin/ctx-remind --version)"
(
  export HOME="$T/home"
  unset CLAUDE_CONFIG_DIR XDG_STATE_HOME XDG_CONFIG_HOME
  mkdir -p "$HOME"
  /usr/bin/ctx-settings install > "$T/setup.log" || fail "ctx-settings install: $(cat "$T/setup.log")"
  grep -q '"command": "/usr/bin/ctx-remind"' "$HOME/.claude/settings.json" || fail "ctx-settings install did not register /usr/bin/ctx-remind"
  grep -q '"command": "/usr/bin/ctx-workflow-mcp"' "$HOME/.claude.json" || fail "the MCP server was not registered"
  grep -q '"command": "/usr/bin/ctx-archive-mcp"' "$HOME/.claude.json" || fail "the archive's MCP server was not registered"
  grep -q '/usr/bin/ctx-trim' "$HOME/.claude/skills/trim/SKILL.md" || fail "the /trim skill was not installed from /usr/share/ctxkit"
  /usr/bin/ctx-settings uninstall > "$T/unsetup.log" || fail "ctx-settings uninstall: $(cat "$T/unsetup.log")"
  [ ! -e "$HOME/.claude/settings.json" ] && [ ! -e "$HOME/.claude.json" ] && [ ! -e "$HOME/.claude/skills/trim" ] ||
    fail "ctx-settings uninstall left files: $(find "$HOME" -type f)"
)
echo "per-user step: ctx-settings install/uninstall from the package: ok"
apt-get remove -y -qq ctxkit >"$T/apt.log" 2>&1 || { cat "$T/apt.log" >&2; fail "apt-get remove ctxkit"; }
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done < "$T/files" || true)
[ -z "$left" ] || fail "left behind by apt-get remove: $left"
[ ! -e /usr/share/ctxkit ] || fail "/usr/share/ctxkit left behind: $(find /usr/share/ctxkit)"
dpkg-query -W -f='${Status}' ctxkit 2>/dev/null | grep -q "install ok installed" && fail "ctxkit still installed"
dpkg --purge ctxkit >/dev/null 2>&1 || true
echo "removed: no file left behind"
echo "package check: ok"
