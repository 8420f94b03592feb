#!/usr/bin/env bash
# install.sh's build progress, fed recorded build logs (logs/: CMake's Makefile generator building
# ctxkit, ninja building a small project): off a terminal a plain line at each further tenth, on
# one a single line redrawn with "\r"; colour codes and other lines ignored; a failing stage names
# its log and shows its last lines.
# Usage: build_progress_test.sh SOURCE_DIR
set -euo pipefail
SRC=$1
LOGS="$SRC/tests/install/logs"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=../../install.sh
source "$SRC/install.sh"
time_re='\(([0-9]+ min [0-9]{2} s|[0-9]+ s)\)'

# Off a terminal, the Makefile generator's log: one line per tenth reached, rising to 100 %.
build_progress "building the programs" 0 "$SECONDS" < "$LOGS/make-build.log" > "$T/plain"
lines=$(wc -l < "$T/plain")
[ "$lines" -ge 5 ] && [ "$lines" -le 11 ] || fail "expected one line per tenth, got $lines: $(cat "$T/plain")"
[ "$lines" -lt "$(grep -c '%\]' "$LOGS/make-build.log")" ] || fail "a line per object"
grep -Evq "^building the programs: [0-9]+% $time_re$" "$T/plain" && fail "unexpected line: $(cat "$T/plain")"
tail -n 1 "$T/plain" | grep -Eq "^building the programs: 100% $time_re$" || fail "does not end at 100%: $(tail -n 1 "$T/plain")"
tenth=-1
while read -r _ _ _ pct _; do
  p=${pct%\%}
  [ $((p / 10)) -gt "$tenth" ] || fail "$p% in the same tenth as the line before: $(cat "$T/plain")"
  tenth=$((p / 10))
done < "$T/plain"

# Ninja's [N/M]: the same, from its counts.
build_progress "building" 0 "$SECONDS" < "$LOGS/ninja-build.log" > "$T/ninja"
[ "$(head -n 1 "$T/ninja" | cut -d' ' -f2)" = "10%" ] || fail "ninja's first step: $(head -n 1 "$T/ninja")"
tail -n 1 "$T/ninja" | grep -Eq "^building: 100% $time_re$" || fail "ninja: $(cat "$T/ninja")"
[ "$(wc -l < "$T/ninja")" -eq 10 ] || fail "ninja: one line per tenth: $(cat "$T/ninja")"

# On a terminal: one line, redrawn in place, never a newline.
build_progress "building the programs" 1 "$SECONDS" < "$LOGS/make-build.log" > "$T/tty"
[ "$(wc -l < "$T/tty")" -eq 0 ] || fail "newlines on a terminal"
[ "$(tr -cd '\r' < "$T/tty" | wc -c)" -ge 10 ] || fail "not redrawn with \\r"
tr '\r' '\n' < "$T/tty" | tail -n 1 | grep -Eq "^building the programs: 100% $time_re *$" || fail "the last state is not 100%: $(tr '\r' '\n' < "$T/tty" | tail -n 1)"

# Colour codes around the percentage, lines without one, a percentage that goes back.
printf '%s\n' "-- Configuring done" $'\e[32m[ 25%]\e[0m Building CXX object a.o' \
  "a.cpp:3:1: warning: [-Wshadow] x" "[ 12%] Built target b" "[ 60%] Linking CXX executable c" > "$T/mixed"
build_progress "building" 0 "$SECONDS" < "$T/mixed" > "$T/mixed.out"
[ "$(cut -d' ' -f2 "$T/mixed.out" | tr '\n' ' ')" = "25% 60% " ] || fail "mixed input: $(cat "$T/mixed.out")"
build_progress "configuring" 0 "$SECONDS" < /dev/null > "$T/none"
[ ! -s "$T/none" ] || fail "output without a percentage: $(cat "$T/none")"

# A stage: its output in the log, "done in" when it succeeds; when it fails, the log named, its last
# lines shown, and install.sh stops with 1.
LOG="$T/install-build.log"
TTY=0
run_stage "building the programs" sh -c 'echo "[ 50%] Building a.o"; echo "[100%] Built target a"' > "$T/ok"
grep -Eq "^building the programs: done in [0-9]+ s$" "$T/ok" || fail "no done line: $(cat "$T/ok")"
grep -q "Built target a" "$LOG" || fail "the output is not in the log"
set +e
(run_stage "building the programs" sh -c 'echo "[ 50%] Building a.o"; echo "a.cpp:1:1: error: boom" >&2; exit 2') > "$T/out" 2> "$T/err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a failed stage exits $rc"
grep -qx "install.sh: error: building the programs failed (exit 2); the whole log is $LOG, its last lines:" "$T/err" || fail "no error naming the log: $(cat "$T/err")"
grep -qx "  a.cpp:1:1: error: boom" "$T/err" || fail "the log's last lines are not shown: $(cat "$T/err")"
grep -q "a.cpp:1:1: error: boom" "$LOG" || fail "the compiler's error is not in the log"
echo "build progress: ok"
