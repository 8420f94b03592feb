#!/usr/bin/env bash
# Builds Release with benchmarks and runs them; then prints each figure of the run beside the one
# recorded in bench/recorded-figures.tsv and flags a figure that got worse by more than the noise
# the run measured (bench/figures.py says how). Generated transcripts (up to 1 GB) are cached in
# ${CTXKIT_BENCH_DIR:-/var/tmp/ctxkit-bench}.
#
#   bench/run.sh [--record] [SUITE ...]
#
# SUITE: meter remind trim search workflow archive run report pins (all of them when none is named; the
# run is long). --record writes this run's figures into bench/recorded-figures.tsv (the figures of
# suites not run are kept). Exit status 1 when a target is missed or a figure regressed.
# CTXKIT_BENCH_BUILD_DIR names another build directory; with CTXKIT_BENCH_NO_BUILD=1 it is used
# as it is (built beforehand, with -DCTXKIT_BUILD_BENCHMARKS=ON, whatever its build type).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${CTXKIT_BENCH_BUILD_DIR:-$SRC/build-bench}"
RECORDED="$SRC/bench/recorded-figures.tsv"
ALL=(meter remind trim search workflow archive run report pins)
record=0
suites=()
for a in "$@"; do
  case "$a" in
    --record) record=1 ;;
    meter|remind|trim|search|workflow|archive|run|report|pins) suites+=("$a") ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown suite '$a' (known: ${ALL[*]})" >&2; exit 2 ;;
  esac
done
[ ${#suites[@]} -eq 0 ] && suites=("${ALL[@]}")

if [ "${CTXKIT_BENCH_NO_BUILD:-0}" != 1 ]; then
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_BENCHMARKS=ON -DCTXKIT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" >/dev/null
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")

# The programs are measured as install.sh installs them (`cmake --install --strip`, which writes
# each in one piece: cmake/write-whole.sh), and the floor program beside them, written the same way:
# how the page cache holds a program changes how fast it starts (docs/performance.md).
BIN="$BUILD/bench-installed/bin"
rm -rf "$BUILD/bench-installed"
cmake --install "$BUILD" --prefix "$BUILD/bench-installed" --strip >/dev/null
cp "$BUILD/bench/stdin_floor" "$BIN/stdin_floor"
sh "$SRC/cmake/write-whole.sh" "$BIN/stdin_floor"

export CTXKIT_BENCH_FIGURES
CTXKIT_BENCH_FIGURES=$(mktemp "${TMPDIR:-/tmp}/ctxkit-figures.XXXXXX")
trap 'rm -f "$CTXKIT_BENCH_FIGURES"' EXIT
status=0
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "build: ${build_type:-?}; load average at start: $load_start"
for s in "${suites[@]}"; do
  echo "== $s"
  case "$s" in
    meter)
      "$BUILD/bench/bench_context_meter" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true || status=1 ;;
    remind)
      "$BUILD/bench/bench_remind_process" "$BIN" "$BIN/stdin_floor" "${CTXKIT_BENCH_RUNS:-300}" || status=1 ;;
    trim)
      "$BUILD/bench/bench_trim" "$BIN" "${CTXKIT_BENCH_TRIM_RUNS:-5}" "${CTXKIT_BENCH_TRIM_SIZES:-100,1024}" || status=1 ;;
    search)
      "$BUILD/bench/bench_search" "$BIN" "${CTXKIT_BENCH_SEARCH_RUNS:-21}" || status=1 ;;
    workflow)
      # The workflow MCP server from spawn to tools/list, per tools/call on a 200-task loop, RSS;
      # beside Lanes's Node server when $CTXKIT_LANES_SERVER names its out/mcp/server.js.
      python3 "$SRC/bench/bench_workflow_mcp.py" --ours "$BIN/ctx-workflow-mcp" --runs "${CTXKIT_BENCH_MCP_RUNS:-21}" || status=1 ;;
    archive)
      # The archive's search through ctx-archive-mcp on a generated 1 GB archive (per query class,
      # median and p99 a call), archive_show, and the live session's indexing by the Stop hook.
      python3 "$SRC/bench/bench_archive_mcp.py" --bin "$BIN" --gen "$BUILD/bench/ctx-gen-transcript" --runs "${CTXKIT_BENCH_ARCHIVE_RUNS:-200}" || status=1 ;;
    report)
      # ctx-report --lineage on a 100 MB session with 3 compactions, 2 trims, a rollover and 40
      # reminders, against wc -l on the same file; the page's size; every event on it.
      "$BUILD/bench/bench_report" "$BIN" "${CTXKIT_BENCH_REPORT_RUNS:-5}" || status=1 ;;
    run)
      # ctx-run's overhead per iteration (its wall time minus the client's) in each context mode,
      # against bench/claude_standin.c, 50 one-iteration tasks a mode.
      python3 "$SRC/bench/bench_run_overhead.py" --ctx-run "$BIN/ctx-run" --claude "$BUILD/bench/claude_standin" --tasks "${CTXKIT_BENCH_RUN_TASKS:-50}" || status=1 ;;
    pins)
      # ctx-pin's hooks (PreCompact, PostCompact, UserPromptSubmit, a restore) with 100 pins,
      # against the floor: each median <= 1.5x.
      python3 "$SRC/bench/bench_pin_hooks.py" --bin "$BIN" --floor "$BIN/stdin_floor" --runs "${CTXKIT_BENCH_PIN_RUNS:-200}" || status=1 ;;
  esac
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average at end: $load_end"
export CTXKIT_BENCH_CONDITIONS="$(date -u +%Y-%m-%dT%H:%MZ), ${build_type:-?} build, suites: ${suites[*]}, load average $load_start at start, $load_end at end, $(nproc) cores"
args=(compare "$RECORDED" "$CTXKIT_BENCH_FIGURES")
[ "$record" = 1 ] && args+=(--record)
python3 "$SRC/bench/figures.py" "${args[@]}" || status=1
exit "$status"
