#!/usr/bin/env bash
# Builds ctxkit with its tests and runs them (unit and end-to-end) with CTest. Installs missing
# Debian packages first (as root). CTXKIT_TEST_BUILD_DIR overrides the build directory;
# CI=true turns warnings into errors.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
"$SRC/install.sh" --deps-only
# The Debian package (cpack -G DEB, tests/package/) also needs dpkg-shlibdeps and file.
missing=()
for p in dpkg-dev file; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
BUILD="${CTXKIT_TEST_BUILD_DIR:-$SRC/build}"
WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXKIT_BUILD_TESTS=ON -DCTXKIT_WERROR="$WERROR" "$@"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
