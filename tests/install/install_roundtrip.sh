#!/usr/bin/env bash
# install.sh round trip in a throw-away HOME: install registers the hook and status line once
# (twice in a row changes nothing), keeps the user's entries, backs the file up and shows the
# build's progress; an install into a second prefix takes every entry over, and each prefix's
# --uninstall removes its files, the last one restoring the user's file; the plugin takes a
# settings install's place. It installs from the test build (--from-build), so it costs no
# Release build of its own.
# Usage: install_roundtrip.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1
BUILD=$(cd "$2" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export HOME="$T/home"
unset CLAUDE_CONFIG_DIR XDG_STATE_HOME XDG_CONFIG_HOME
mkdir -p "$HOME/.claude"
cat > "$HOME/.claude/settings.json" <<'JSON'
{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write"
          }
        ]
      }
    ]
  }
}
JSON
cp "$HOME/.claude/settings.json" "$T/original.json"

"$SRC/install.sh" --prefix "$T/prefix" --from-build "$BUILD" > "$T/out1" || fail "install failed: $(cat "$T/out1")"
S="$HOME/.claude/settings.json"
[ "$(grep -c "\"command\": \"$T/prefix/bin/ctx-remind\"" "$S")" -eq 1 ] || fail "ctx-remind not registered once"
grep -q "\"command\": \"$T/prefix/bin/ctx-status\"" "$S" || fail "status line not registered"
[ "$(grep -c "\"command\": \"$T/prefix/bin/ctx-session-hook\"" "$S")" -eq 4 ] || fail "session hooks not registered"
grep -q "\"command\": \"$T/prefix/bin/ctx-gate --hook\"" "$S" || fail "the workflow gate is not registered on SessionStart"
grep -q '"command": "prettier --write"' "$S" || fail "the user's hook is gone"
ls "$HOME/.claude/" | grep -q '^settings.json.ctxkit-backup-' || fail "no backup"
cmp -s "$(ls "$HOME"/.claude/settings.json.ctxkit-backup-* | head -1)" "$T/original.json" || fail "backup differs from the original"
for p in ctx-remind ctx-status ctx-settings; do [ -x "$T/prefix/bin/$p" ] || fail "$p not installed"; done
"$T/prefix/bin/ctx-remind" --version | grep -q '^ctx-remind ' || fail "installed ctx-remind does not run"
SK="$HOME/.claude/skills/trim/SKILL.md"
[ -f "$SK" ] || fail "the /trim skill was not installed"
grep -q "$T/prefix/bin/ctx-trim" "$SK" || fail "the skill does not name the installed ctx-trim"
grep -q '@CTXKIT_BIN@' "$SK" && fail "the skill still has a placeholder"
"$T/prefix/bin/ctx-trim" --version | grep -q '^ctx-trim ' || fail "installed ctx-trim does not run"

grep -q "\"command\": \"$T/prefix/bin/ctx-workflow-mcp\"" "$HOME/.claude.json" || fail "the MCP server was not registered in ~/.claude.json"
grep -q "\"ctxkit-archive\"" "$HOME/.claude.json" && grep -q "\"command\": \"$T/prefix/bin/ctx-archive-mcp\"" "$HOME/.claude.json" ||
  fail "the archive's MCP server was not registered in ~/.claude.json"
cp "$S" "$T/after1.json"
cp "$HOME/.claude.json" "$T/claude1.json"
"$SRC/install.sh" --prefix "$T/prefix" --from-build "$BUILD" > "$T/out2" || fail "second install failed"
cmp -s "$S" "$T/after1.json" || fail "a second install changed settings.json"
cmp -s "$HOME/.claude.json" "$T/claude1.json" || fail "a second install changed ~/.claude.json"

"$T/prefix/bin/ctx-settings" uninstall --help >/dev/null
grep -q "^building the programs: done in " "$T/out1" || fail "no progress of the build shown: $(cat "$T/out1")"
[ -s "$BUILD/install-build.log" ] || fail "no build log in $BUILD/install-build.log"

# A newer install from another prefix takes every entry over (one line each), so that nothing
# runs twice; the first prefix's uninstall then removes its files and leaves the settings alone.
"$SRC/install.sh" --prefix "$T/prefix2" --from-build "$BUILD" > "$T/out5" || fail "install into a second prefix failed: $(cat "$T/out5")"
[ "$(grep -c '"command": ".*/ctx-remind"' "$S")" -eq 1 ] || fail "ctx-remind registered more than once: $(cat "$S")"
[ "$(grep -c '"command": ".*/ctx-session-hook"' "$S")" -eq 4 ] || fail "ctx-session-hook not once per event"
grep -q "\"command\": \"$T/prefix2/bin/ctx-status\"" "$S" || fail "the status line was not taken over"
grep -q "\"command\": \"$T/prefix2/bin/ctx-workflow-mcp\"" "$HOME/.claude.json" || fail "the MCP server was not taken over"
[ "$(grep -c '^replaced: ' "$T/out5")" -eq 13 ] || fail "not one line per replaced entry: $(cat "$T/out5")"
grep -q -- '--replace' "$T/out5" && fail "the second install kept ctxkit's own entries: $(cat "$T/out5")"
cp "$S" "$T/after5.json"
"$SRC/install.sh" --prefix "$T/prefix" --uninstall > "$T/out6" || fail "uninstall of the first prefix failed: $(cat "$T/out6")"
cmp -s "$S" "$T/after5.json" || fail "the first prefix's uninstall changed the second's settings"
[ -z "$(find "$T/prefix" -type f)" ] || fail "files of the first prefix left behind: $(find "$T/prefix" -type f)"
"$SRC/install.sh" --prefix "$T/prefix2" --uninstall > "$T/out3" || fail "uninstall failed: $(cat "$T/out3")"
cmp -s "$S" "$T/original.json" || { diff "$S" "$T/original.json" >&2; fail "uninstall did not restore the user's settings"; }
[ ! -e "$HOME/.claude.json" ] || fail "~/.claude.json (created by the install) was left behind: $(cat "$HOME/.claude.json")"
[ -z "$(find "$T/prefix2" -type f)" ] || fail "files left behind: $(find "$T/prefix2" -type f)"
[ ! -e "$HOME/.claude/skills/trim" ] || fail "the skill was left behind"
[ ! -e "$HOME/.claude/skills/rollover" ] || fail "the rollover skill was left behind"

# The plugin after a settings install: it takes the settings install's place (hooks, MCP servers,
# skills) and the status line runs the plugin's ctx-status; its own uninstall gives the user's
# settings back.
"$SRC/install.sh" --prefix "$T/prefix" --from-build "$BUILD" > "$T/out7" || fail "install failed: $(cat "$T/out7")"
"$SRC/install.sh" --plugin "$T/plugin" --from-build "$BUILD" > "$T/outp2" || fail "install.sh --plugin failed: $(cat "$T/outp2")"
grep -q '"name": "ctxkit"' "$T/plugin/.claude-plugin/plugin.json" || fail "no plugin manifest"
grep -q '"source": "./"' "$T/plugin/.claude-plugin/marketplace.json" || fail "no marketplace"
grep -q 'CLAUDE_PLUGIN_ROOT}/bin/ctx-remind' "$T/plugin/hooks/hooks.json" || fail "no ctx-remind hook in the plugin"
"$T/plugin/bin/ctx-remind" --version | grep -q '^ctx-remind ' || fail "the plugin's ctx-remind does not run"
grep -q "claude plugin install ctxkit@ctxkit" "$T/outp2" || fail "--plugin does not say how to add it"
grep -q "ctxkit runs as the plugin" "$T/outp2" || fail "--plugin does not say it switched: $(cat "$T/outp2")"
grep -q 'ctx-remind"' "$S" && fail "the settings install's hooks stayed beside the plugin: $(cat "$S")"
grep -q "\"command\": \"$T/plugin/bin/ctx-status\"" "$S" || fail "the status line does not run the plugin's ctx-status"
grep -q '"command": "prettier --write"' "$S" || fail "the user's hook is gone"
[ ! -e "$HOME/.claude.json" ] || fail "the settings install's MCP servers stayed: $(cat "$HOME/.claude.json")"
"$T/plugin/bin/ctx-settings" uninstall > "$T/outp3" || fail "the plugin's uninstall failed: $(cat "$T/outp3")"
cmp -s "$S" "$T/original.json" || { diff "$S" "$T/original.json" >&2; fail "the plugin's uninstall did not restore the user's settings"; }
"$SRC/install.sh" --prefix "$T/prefix" --uninstall > "$T/out8" || fail "uninstall failed: $(cat "$T/out8")"
[ -z "$(find "$T/prefix" -type f)" ] || fail "files left behind: $(find "$T/prefix" -type f)"
"$SRC/install.sh" --prefix "$T/prefix" --from-build "$T/nowhere" > "$T/out4" 2>&1 && fail "--from-build accepted a missing build"
grep -q "^install.sh: error: $T/nowhere is not a CMake build directory$" "$T/out4" || fail "unexpected error: $(cat "$T/out4")"
echo "install round trip: ok"
