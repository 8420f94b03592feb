#!/usr/bin/env bash
# `claude plugin validate` on the built plugin, with the real client when one is found:
# $CLAUDE_BIN, else `claude` on PATH. Without a client the test is skipped (exit 77), so the
# default run stays offline. The client runs in a throw-away HOME.
# Usage: validate_plugin.sh PLUGIN_DIR
set -euo pipefail
PLUGIN=$1
CLAUDE="${CLAUDE_BIN:-$(command -v claude || true)}"
if [ -z "$CLAUDE" ] || [ ! -x "$CLAUDE" ]; then
  echo "skipped: no Claude Code client (set CLAUDE_BIN or put claude on PATH)"
  exit 77
fi
[ -f "$PLUGIN/.claude-plugin/plugin.json" ] || { echo "FAIL: $PLUGIN has no .claude-plugin/plugin.json (build the plugin target)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home"
run() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/home" TERM=dumb LANG=C.UTF-8 \
          DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$CLAUDE" "$@"; }
echo "client: $(run --version)"
# The folder is the marketplace (.claude-plugin/marketplace.json, validated when the folder is
# given) and the plugin (.claude-plugin/plugin.json, validated with its hooks/hooks.json when the
# manifest is given). --strict: warnings fail too.
for target in "$PLUGIN" "$PLUGIN/.claude-plugin/plugin.json"; do
  out=$(run plugin validate --strict "$target" 2>&1) || { echo "$out"; echo "FAIL: claude plugin validate --strict $target"; exit 1; }
  echo "$out"
done
echo "plugin validation: ok"
