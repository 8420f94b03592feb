#!/bin/sh
# Fails when a new build folder, configured as install.sh and tests/run.sh configure one (no
# options given), does not get the build-time remedies of cmake/FastBuild.cmake: the precompiled
# headers of the library and the test programs, and the unity groups. A lost option() once turned
# the precompiled header off for every fresh clone while existing build folders kept it cached.
# Usage: fast_build_defaults.sh SOURCE_DIR
[ $# -eq 1 ] || { echo "usage: fast_build_defaults.sh SOURCE_DIR" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! cmake -S "$1" -B "$tmp" -DCMAKE_BUILD_TYPE=Release -DCTXKIT_BUILD_TESTS=ON >"$tmp.log" 2>&1; then
  cat "$tmp.log" >&2
  rm -f "$tmp.log"
  echo "fast_build_defaults: configuring $1 failed" >&2
  exit 1
fi
rm -f "$tmp.log"
status=0
for f in lib/CMakeFiles/ctxkit.dir/cmake_pch.hxx tests/CMakeFiles/unit_tests.dir/cmake_pch.hxx; do
  [ -f "$tmp/$f" ] || { echo "fast_build_defaults: no precompiled header by default ($f)" >&2; status=1; }
done
for d in lib/CMakeFiles/ctxkit.dir/Unity tests/CMakeFiles/unit_tests.dir/Unity tests/CMakeFiles/e2e_tests.dir/Unity; do
  ls "$tmp/$d"/unity_*.cxx >/dev/null 2>&1 || { echo "fast_build_defaults: no unity groups by default ($d)" >&2; status=1; }
done
exit $status
