#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 16, ASan+UBSan) and runs each for SECONDS (default 30) on
# a corpus seeded from the recorded fixtures and tests/fuzz/seeds/. Installs clang-16 and its
# runtime from Debian when missing (as root). Stops at the first finding; the crashing input is
# left in the build directory's fuzz/findings/<target>/.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      (CTXKIT_FUZZ_BUILD_DIR overrides build-fuzz/)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_EACH=${1:-30}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(hook_payload transcript_line trimmer_line config_toml settings_merge stream_result limit_answer fts_query archive_server)
BUILD="${CTXKIT_FUZZ_BUILD_DIR:-$SRC/build-fuzz}"

if ! command -v clang++-16 >/dev/null || [ ! -d /usr/lib/llvm-16/lib/clang/16/lib/linux ]; then
  [ "$(id -u)" -eq 0 ] || { echo "fuzz: error: needs clang-16 and libclang-rt-16-dev (apt-get install as root)" >&2; exit 1; }
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev >/dev/null
fi
CC=clang-16 CXX=clang++-16 cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCTXKIT_FUZZ=ON -DCTXKIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${TARGETS[@]}") >/dev/null

# Seeds: one file per recorded line (hook payloads, transcript lines), plus the hand-made seeds.
FIX="$SRC/tests/fixtures"
seed_lines() {  # seed_lines DIR FILES... : each line of 64 KiB or less becomes a file
  local dir=$1
  shift
  mkdir -p "$dir"
  local n=0
  for f in "$@"; do
    while IFS= read -r line || [ -n "$line" ]; do
      [ ${#line} -le 65536 ] || continue
      n=$((n + 1))
      printf '%s' "$line" > "$dir/seed-$n"
    done < "$f"
  done
}
CORPUS="$BUILD/fuzz/corpus"
rm -rf "$CORPUS"
mapfile -t hook_logs < <(find "$FIX" -name hooks.jsonl | sort)
mapfile -t transcripts < <(find "$FIX" -path '*/transcripts/*.jsonl' | sort | head -n 20)
seed_lines "$CORPUS/hook_payload" "${hook_logs[@]}"
seed_lines "$CORPUS/transcript_line" "${transcripts[@]}"
seed_lines "$CORPUS/trimmer_line" "${transcripts[@]}"
mkdir -p "$CORPUS/config_toml" "$CORPUS/settings_merge" "$CORPUS/stream_result" "$CORPUS/limit_answer"
cp "$SRC"/tests/fuzz/seeds/config/* "$CORPUS/config_toml/"
cp "$SRC"/tests/fuzz/seeds/settings/* "$CORPUS/settings_merge/"
# stream_result: each recorded stream-json output whole (a limit's from its "stdout" lines);
# limit_answer: the hand-made words, and zone files ('Z' and the file).
n=0
while IFS= read -r f; do
  n=$((n + 1))
  head -c 65536 "$f" > "$CORPUS/stream_result/seed-$n"
done < <(find "$FIX" -path '*/stream-json/*.jsonl' | sort)
for f in "$FIX"/claude-code-*/limits/*.json; do
  n=$((n + 1))
  python3 -c 'import json,sys; sys.stdout.write("\n".join(json.load(open(sys.argv[1]))["stdout"]))' "$f" \
    | head -c 65536 > "$CORPUS/stream_result/seed-$n"
done
cp "$SRC"/tests/fuzz/seeds/limits/* "$CORPUS/limit_answer/"
for z in UTC Europe/Paris America/New_York Australia/Lord_Howe America/Sao_Paulo; do
  [ -f "/usr/share/zoneinfo/$z" ] || continue
  { printf Z; cat "/usr/share/zoneinfo/$z"; } > "$CORPUS/limit_answer/zone-${z//\//-}"
done
seed_lines "$CORPUS/fts_query" "$SRC"/tests/fuzz/seeds/fts_query/*
seed_lines "$CORPUS/archive_server" "$SRC"/tests/fuzz/seeds/archive_server/*

status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "$BUILD/fuzz/findings/$t" "$BUILD/fuzz/work/$t"
  echo "fuzz_$t: ${SECONDS_EACH}s"
  if ! "$BUILD/tests/fuzz/fuzz_$t" "$BUILD/fuzz/work/$t" "$CORPUS/$t" -max_total_time="$SECONDS_EACH" \
       -max_len=65536 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$BUILD/fuzz/findings/$t/" \
       -print_final_stats=1 > "$BUILD/fuzz/$t.log" 2>&1; then
    echo "fuzz_$t: FOUND a problem, see $BUILD/fuzz/$t.log and $BUILD/fuzz/findings/$t/" >&2
    tail -n 30 "$BUILD/fuzz/$t.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$BUILD/fuzz/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
