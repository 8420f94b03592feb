#!/usr/bin/env bash
# Builds Release with benchmarks and runs them. Generated transcripts (up to 1 GB) are cached in
# ${CTXKIT_BENCH_DIR:-/var/tmp/ctxkit-bench}.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${CTXKIT_BENCH_BUILD_DIR:-$SRC/build-bench}"
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_BENCHMARKS=ON -DCTXKIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
"$BUILD/bench/bench_context_meter" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@"
"$BUILD/bench/bench_remind_process" "$BUILD/hooks" "$BUILD/bench/stdin_floor" "${CTXKIT_BENCH_RUNS:-300}"
"$BUILD/bench/bench_trim" "$BUILD/hooks" "${CTXKIT_BENCH_TRIM_RUNS:-5}"
"$BUILD/bench/bench_search" "$BUILD/hooks" "${CTXKIT_BENCH_SEARCH_RUNS:-21}"
# The workflow MCP server from spawn to tools/list, per tools/call on a 200-task loop, RSS; beside
# Lanes's Node server when $CTXKIT_LANES_SERVER names its out/mcp/server.js.
python3 "$SRC/bench/bench_workflow_mcp.py" --ours "$BUILD/hooks/ctx-workflow-mcp" --runs "${CTXKIT_BENCH_MCP_RUNS:-21}"
# The archive's search through ctx-archive-mcp on a generated 1 GB archive (per query class, median
# and p99 a call), archive_show, and the live session's indexing by the Stop hook.
python3 "$SRC/bench/bench_archive_mcp.py" --bin "$BUILD/hooks" --gen "$BUILD/bench/ctx-gen-transcript" --runs "${CTXKIT_BENCH_ARCHIVE_RUNS:-200}"
# ctx-run's overhead per iteration (its wall time minus the client's) in each context mode, against
# bench/claude_standin.c, 50 one-iteration tasks a mode.
python3 "$SRC/bench/bench_run_overhead.py" --ctx-run "$BUILD/hooks/ctx-run" --claude "$BUILD/bench/claude_standin" --tasks "${CTXKIT_BENCH_RUN_TASKS:-50}"
