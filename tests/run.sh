#!/usr/bin/env bash
# Builds ctxkit with its tests and runs them (unit and end-to-end) with CTest. Installs missing
# Debian packages first (as root). The build folder is install.sh's (build/, CTXKIT_TEST_BUILD_DIR
# overrides it), so that after ./install.sh only the tests are left to compile; a new folder is
# configured Release like install.sh's, an existing one keeps its build type. CI=true turns
# warnings into errors.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
"$SRC/install.sh" --deps-only
# The tests also need: dpkg-shlibdeps and file (the Debian package, tests/package/), git (the
# runner's anchor reads the git state), python3 (the live harness's offline self-test, the skip
# check), clang-format-14 (the format test), the sqlite3 shell (a locked or unmigrated database
# made by hand), tzdata (the limit classifier's zones) and zlib (the page tests decode screenshots).
missing=()
for p in dpkg-dev file git python3 clang-format-14 sqlite3 tzdata zlib1g-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
BUILD="${CTXKIT_TEST_BUILD_DIR:-$SRC/build}"
# With ccache (used when installed), a clone in another folder hits what this one compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$SRC}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON
TYPE=()
[ -f "$BUILD/CMakeCache.txt" ] || TYPE=(-DCMAKE_BUILD_TYPE=Release)
cmake -S "$SRC" -B "$BUILD" ${TYPE[@]+"${TYPE[@]}"} -DCTXKIT_BUILD_TESTS=ON -DCTXKIT_WERROR="$WERROR" "$@"
cmake --build "$BUILD" -j"$(nproc)"
# CTXKIT_TEST_WHOLE_PROGRAMS=1 (the sanitizer pass of .ci/run): each test program runs whole, in
# as many shards as there are cores, instead of one process per test: an instrumented test
# program takes about a second to start, which CTest would pay for each of its 2,000 tests.
if [ "${CTXKIT_TEST_WHOLE_PROGRAMS:-0}" = "1" ]; then
  status=0
  shards=$(nproc)
  for program in unit_tests e2e_tests; do
    pids=()
    for ((i = 0; i < shards; i++)); do
      (cd "$BUILD/tests" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
        "./$program" --gtest_brief=1 >"$BUILD/tests/$program.shard$i.log" 2>&1) &
      pids+=($!)
    done
    for ((i = 0; i < shards; i++)); do
      if ! wait "${pids[$i]}"; then
        status=1
        echo "$program, shard $((i + 1)) of $shards, failed; its output:"
        cat "$BUILD/tests/$program.shard$i.log"
      fi
    done
    grep -h '^\[  PASSED  \]\|^\[  SKIPPED \]' "$BUILD/tests/$program".shard*.log |
      sed "s/^/$program: /" || true
  done
  exit "$status"
fi
# With CI=true a test that skips fails the run unless tests/ci-skips.txt names it. The test
# programs run a process per suite (cmake/GTestSuites.cmake), each writing GoogleTest's report
# into tests/gtest-results/, from which the cases are counted and their skips told.
status=0
results="$BUILD/tests/gtest-results"
rm -rf "$results"
mkdir -p "$results"
# Two suites per core: many wait on the programs they start (a stand-in client, a browser, a
# lock), so one per core leaves a third of the time idle (131 s against 95-114 s on two cores).
# CTXKIT_TEST_JOBS sets another number.
jobs="${CTXKIT_TEST_JOBS:-$(($(nproc) * 2))}"
ctest --test-dir "$BUILD" --output-on-failure -j"$jobs" --output-junit ctest-results.xml || status=$?
# What the count counts: the recorded payloads are also re-run with their keys reordered, spaced
# or extended (the client's JSON parsed by content), each a test of its own.
check=(python3 "$SRC/tests/check_skips.py" "$BUILD/ctest-results.xml" "$results")
[ "${CI:-}" = "true" ] && check+=(--allowed "$SRC/tests/ci-skips.txt")
"${check[@]}" || status=1
exit "$status"
