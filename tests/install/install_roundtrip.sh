#!/usr/bin/env bash
# install.sh round trip in a throw-away HOME: install registers the hook and status line once
# (twice in a row changes nothing), keeps the user's entries, backs the file up, and
# --uninstall restores the user's file and removes every installed file. It installs from the
# test build (--from-build), so it costs no Release build of its own.
# Usage: install_roundtrip.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1
BUILD=$2
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
# The plugin is refused while the settings install is active (every hook would run twice).
"$SRC/install.sh" --plugin "$T/plugin" --from-build "$BUILD" > "$T/outp1" 2>&1 && fail "--plugin accepted a second install"
grep -q "the settings install is active" "$T/outp1" || fail "unexpected --plugin refusal: $(cat "$T/outp1")"
[ ! -e "$T/plugin" ] || fail "--plugin wrote $T/plugin although it refused"
"$SRC/install.sh" --prefix "$T/prefix" --uninstall > "$T/out3" || fail "uninstall failed: $(cat "$T/out3")"
cmp -s "$S" "$T/original.json" || { diff "$S" "$T/original.json" >&2; fail "uninstall did not restore the user's settings"; }
[ ! -e "$HOME/.claude.json" ] || fail "~/.claude.json (created by the install) was left behind: $(cat "$HOME/.claude.json")"
[ -z "$(find "$T/prefix" -type f)" ] || fail "files left behind: $(find "$T/prefix" -type f)"
[ ! -e "$HOME/.claude/skills/trim" ] || fail "the skill was left behind"
[ ! -e "$HOME/.claude/skills/rollover" ] || fail "the rollover skill was left behind"
# After the uninstall, the plugin: written from the build, settings.json untouched.
"$SRC/install.sh" --plugin "$T/plugin" --from-build "$BUILD" > "$T/outp2" || fail "install.sh --plugin failed: $(cat "$T/outp2")"
grep -q '"name": "ctxkit"' "$T/plugin/.claude-plugin/plugin.json" || fail "no plugin manifest"
grep -q '"source": "./"' "$T/plugin/.claude-plugin/marketplace.json" || fail "no marketplace"
grep -q 'CLAUDE_PLUGIN_ROOT}/bin/ctx-remind' "$T/plugin/hooks/hooks.json" || fail "no ctx-remind hook in the plugin"
"$T/plugin/bin/ctx-remind" --version | grep -q '^ctx-remind ' || fail "the plugin's ctx-remind does not run"
grep -q "claude plugin install ctxkit@ctxkit" "$T/outp2" || fail "--plugin does not say how to add it"
cmp -s "$S" "$T/original.json" || fail "install.sh --plugin changed settings.json"
"$SRC/install.sh" --prefix "$T/prefix" --from-build "$T/nowhere" > "$T/out4" 2>&1 && fail "--from-build accepted a missing build"
grep -q "^install.sh: error: $T/nowhere is not a CMake build directory$" "$T/out4" || fail "unexpected error: $(cat "$T/out4")"
echo "install round trip: ok"
