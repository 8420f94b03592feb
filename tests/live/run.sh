#!/usr/bin/env bash
# Runs every live check against the real Claude Code client and the fake API of this folder, for
# both models, and prints a summary; exit 1 when any check fails. Builds nothing.
#
#   tests/live/run.sh [BIN_DIR] [CHECK ARGS...]   # BIN_DIR: the built programs (default build/hooks)
#                                                 # and the plugin beside it (build/plugin)
#   tests/live/run.sh build/hooks --model claude-sonnet-4-5   # arguments after BIN_DIR go to every check
#
# The client: $CLAUDE_BIN, else the pinned version ($CLAUDE_CODE_VERSION) that install_client.sh
# installs with npm into ${CTXKIT_LIVE_CACHE:-~/.cache/ctxkit-live} on first use. Needs python3,
# git and tmux (the status line only runs in the interactive client). Work folders go under
# $CTXKIT_LIVE_WORK (default: a new temporary folder), removed when every check passed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN_DIR=${1:-$SRC/build/hooks}
[ $# -gt 0 ] && shift

CHECKS=(check_live check_status_live check_trim_live check_rollover_live check_workflow_live check_supervised_live
        check_run_live check_plugin_live check_recall_live)
PROGRAMS=(ctx-remind ctx-status ctx-trim ctx-rollover ctx-lineage ctx-search ctx-session-hook
          ctx-workflow-mcp ctx-workflow ctx-gate ctx-run ctx-archive-mcp)

for p in "${PROGRAMS[@]}"; do
  if [ ! -x "$BIN_DIR/$p" ]; then
    echo "run.sh: $BIN_DIR/$p not found: build the programs first (cmake --build build)" >&2
    exit 2
  fi
done
BIN_DIR=$(cd "$BIN_DIR" && pwd)
for tool in python3 git tmux; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run.sh: $tool not found (Debian: apt-get install $tool)" >&2
    exit 2
  fi
done

CLAUDE_BIN=$("$HERE/install_client.sh") || exit 2
export CLAUDE_BIN
VERSION_HOME=$(mktemp -d)
echo "client: $CLAUDE_BIN ($(HOME=$VERSION_HOME "$CLAUDE_BIN" --version 2>&1 | head -1))"
rm -rf "$VERSION_HOME"

WORK=${CTXKIT_LIVE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-live.XXXXXX")}
mkdir -p "$WORK"
declare -A RESULT SECONDS_TAKEN
failed=0
for check in "${CHECKS[@]}"; do
  echo "--- $check"
  start=$(date +%s)
  python3 "$HERE/$check.py" "$BIN_DIR" --work "$WORK/$check" "$@" 2>&1 | tee "$WORK/$check.log"
  rc=${PIPESTATUS[0]}
  SECONDS_TAKEN[$check]=$(( $(date +%s) - start ))
  if [ "$rc" -eq 0 ]; then RESULT[$check]=passed; else RESULT[$check]="FAILED (exit $rc)"; failed=1; fi
done

echo
echo "live checks (client $CLAUDE_BIN):"
for check in "${CHECKS[@]}"; do
  printf '  %-22s %-18s %4ss\n' "$check" "${RESULT[$check]}" "${SECONDS_TAKEN[$check]}"
done
if [ "$failed" -ne 0 ]; then
  echo "some live checks FAILED; logs and work folders in $WORK"
  exit 1
fi
[ -z "${CTXKIT_LIVE_WORK:-}" ] && rm -rf "$WORK"
echo "all live checks passed"
