#!/usr/bin/env bash
# Builds ctxkit with its tests and runs them (unit and end-to-end) with CTest. Installs missing
# Debian packages first (as root). CTXKIT_TEST_BUILD_DIR overrides the build directory;
# CI=true turns warnings into errors.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
"$SRC/install.sh" --deps-only
BUILD="${CTXKIT_TEST_BUILD_DIR:-$SRC/build}"
WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXKIT_BUILD_TESTS=ON -DCTXKIT_WERROR="$WERROR" "$@"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
