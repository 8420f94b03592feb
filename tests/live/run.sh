#!/usr/bin/env bash
# Runs every live check against the real Claude Code client and the fake API of this folder, for
# both models, on each client version asked for, and prints a summary; exit 1 when any check
# fails. Builds nothing.
#
#   tests/live/run.sh [BIN_DIR] [--client VERSION[,VERSION...]] [CHECK ARGS...]
#       BIN_DIR: the built programs (default build/hooks) and the plugin beside it (build/plugin)
#   tests/live/run.sh build/hooks --client 2.1.332 --model claude-sonnet-4-5
#       other arguments go to every check
#
# The clients: --client, else both ends of the supported range (cmake/claude-code-range.txt), each
# installed by install_client.sh with npm into ${CTXKIT_LIVE_CACHE:-~/.cache/ctxkit-live} on first
# use; with $CLAUDE_BIN set and no --client, that client alone. Needs python3, git and tmux (the
# status line only runs in the interactive client). Work folders go under $CTXKIT_LIVE_WORK
# (default: a new temporary folder), one a version, removed when every check passed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN_DIR=$SRC/build/hooks
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  BIN_DIR=$1
  shift
fi
CLIENTS=""
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --client) [ $# -ge 2 ] || { echo "run.sh: --client needs a version" >&2; exit 2; }; CLIENTS=$2; shift 2 ;;
    --client=*) CLIENTS=${1#--client=}; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
range_end() {  # $1: oldest or newest, from cmake/claude-code-range.txt
  awk -v k="$1" '$1 == k { print $2 }' "$SRC/cmake/claude-code-range.txt"
}
if [ -z "$CLIENTS" ] && [ -z "${CLAUDE_BIN:-}" ]; then
  CLIENTS="$(range_end oldest),$(range_end newest)"
fi

CHECKS=(check_live check_status_live check_compaction_live check_trim_live check_rollover_live check_workflow_live check_supervised_live
        check_run_live check_plugin_live check_recall_live check_cap_live check_compact_at_live
        check_compact_due_live check_supervisor_killed_live)
PROGRAMS=(ctx-remind ctx-status ctx-trim ctx-rollover ctx-lineage ctx-search ctx-session-hook
          ctx-workflow-mcp ctx-workflow ctx-gate ctx-run ctx-archive-mcp ctx-report ctx-cap ctx-pin)

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

WORK=${CTXKIT_LIVE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-live.XXXXXX")}
mkdir -p "$WORK"
declare -A RESULT SECONDS_TAKEN
failed=0
VERSIONS=()

run_checks() {  # $1: a label for the client (its version); CLAUDE_BIN is the client
  local label=$1 check rc start
  VERSIONS+=("$label")
  mkdir -p "$WORK/$label"
  for check in "${CHECKS[@]}"; do
    echo "--- $check (Claude Code $label)"
    start=$(date +%s)
    python3 "$HERE/$check.py" "$BIN_DIR" --work "$WORK/$label/$check" "${ARGS[@]}" 2>&1 | tee "$WORK/$label/$check.log"
    rc=${PIPESTATUS[0]}
    SECONDS_TAKEN[$label/$check]=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ]; then RESULT[$label/$check]=passed; else RESULT[$label/$check]="FAILED (exit $rc)"; failed=1; fi
  done
}

client_version() {  # $1: a client; its version as it reports it
  local home out
  home=$(mktemp -d)
  out=$(HOME=$home DISABLE_AUTOUPDATER=1 "$1" --version 2>&1 | head -1)
  rm -rf "$home"
  printf '%s\n' "${out%% *}"
}

if [ -n "$CLIENTS" ]; then
  IFS=, read -r -a WANTED <<< "$CLIENTS"
  for version in "${WANTED[@]}"; do
    if ! CLAUDE_BIN=$(unset CLAUDE_BIN; CLAUDE_CODE_VERSION=$version "$HERE/install_client.sh"); then
      echo "run.sh: could not install Claude Code $version" >&2
      exit 2
    fi
    export CLAUDE_BIN
    echo "client: $CLAUDE_BIN ($(client_version "$CLAUDE_BIN"))"
    run_checks "$version"
  done
else
  export CLAUDE_BIN
  label=$(client_version "$CLAUDE_BIN")
  echo "client: $CLAUDE_BIN ($label)"
  run_checks "${label:-client}"
fi

echo
for label in "${VERSIONS[@]}"; do
  echo "live checks (Claude Code $label):"
  for check in "${CHECKS[@]}"; do
    printf '  %-22s %-18s %4ss\n' "$check" "${RESULT[$label/$check]}" "${SECONDS_TAKEN[$label/$check]}"
  done
done
if [ "$failed" -ne 0 ]; then
  echo "some live checks FAILED; logs and work folders in $WORK"
  exit 1
fi
[ -z "${CTXKIT_LIVE_WORK:-}" ] && rm -rf "$WORK"
echo "all live checks passed"
