#!/usr/bin/env bash
# The layering check must reject each kind of break in tests/layering_cases/, each with its line.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$("$here/layering.sh" "$here/layering_cases/bad" 2>&1)"
rc=$?
status=0
[ $rc -ne 0 ] || { echo "expected a failing exit status"; status=1; }
for want in "util/helper.hpp:2: 'util' may not include 'store/'" \
            "context/meter.hpp:2: only store/ includes sqlite3.h" \
            "hooks/ctx_x.cpp: a program includes only apps/"; do
  grep -qF -- "$want" <<<"$out" || { echo "missing: $want"; status=1; }
done
[ $status -eq 0 ] || printf '%s\n' "$out"
exit $status
