#!/bin/sh
# Fails when a statically linked program (a hook) links one of the library's cold unity groups: the
# library's cold files are grouped apart (lib/CMakeLists.txt, CTXKIT_COLD_SOURCES) on the promise
# that no hook links them (they use simdjson, a shared library, and the hooks' own files are grouped
# in the "hot" groups). Usage: unity_link_check.sh MAP...  (the link maps the static programs wrote)
[ $# -gt 0 ] || { echo "usage: unity_link_check.sh MAP..." >&2; exit 2; }
status=0
for map in "$@"; do
  [ -f "$map" ] || { echo "unity_link_check: $map: no such link map" >&2; status=1; continue; }
  groups=$(grep -o 'libctxkit\.a(unity_ctxkit_cold[^)]*)' "$map" | sort -u | tr '\n' ' ')
  if [ -n "$groups" ]; then
    echo "unity_link_check: $(basename "$map" .map) links $groups- move the file it needs out of CTXKIT_COLD_SOURCES" >&2
    status=1
  fi
done
exit $status
