#!/usr/bin/env bash
# The layering check must reject each kind of break in tests/layering_cases/, each with its line,
# and pass what the rule allows (bad/workflow/allowed.hpp).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$("$here/layering.sh" "$here/layering_cases/bad" 2>&1)"
rc=$?
status=0
[ $rc -ne 0 ] || { echo "expected a failing exit status"; status=1; }
for want in "loose.cpp: a source file directly in lib/" \
            "extra/thing.hpp: folder 'extra' has no rule" \
            "util/helper.hpp:2: 'util' may not include 'store/'" \
            "core/angle.hpp:2: 'core' may not include 'store/' (#include <store/thing.hpp>)" \
            "context/reminder.hpp:2: a pure module may not include store/" \
            "claude/parser.cpp:2: a pure module may not include util/ (#include <util/process.hpp>)" \
            "context/meter.hpp:2: only store/ includes sqlite3.h" \
            "core/settings.cpp:1: only core/config.cpp includes toml++" \
            "store/yaml.cpp:1: only workflow/ includes yaml-cpp" \
            "hooks/ctx_x.cpp: a program includes only apps/ (#include \"store/state_store.hpp\")" \
            "hooks/ctx_y.cpp: a program includes only apps/ (#include <store/state_store.hpp>)"; do
  grep -qF -- "$want" <<<"$out" || { echo "missing: $want"; status=1; }
done
if grep -qF "workflow/allowed.hpp" <<<"$out"; then
  echo "an allowed include was rejected:"; grep -F "workflow/allowed.hpp" <<<"$out"; status=1
fi
[ $status -eq 0 ] || printf '%s\n' "$out"
exit $status
