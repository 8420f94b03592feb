#!/bin/sh
# The program given was linked with hooks/hot-text.ld: it has a .text.hot section, and each
# function named lies inside it (a C++ name without its parameters: the first overload that is not
# a split-off cold part). Exit 77 (skipped) without readelf or nm.
command -v readelf >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || { echo "readelf or nm not found: skipped"; exit 77; }
program=$1
shift
# The section's address and size (found by its name: readelf writes "[ 9]" below 10, one more field).
range=$(readelf -SW "$program" | awk '{ for (i = 1; i + 4 <= NF; i++) if ($i == ".text.hot") { print $(i + 2), $(i + 4); exit } }')
if [ -z "$range" ]; then
  echo "$program has no .text.hot section (hooks/hot-text.ld not applied)"
  exit 1
fi
status=0
for fn in "$@"; do
  addr=$(nm -C --defined-only "$program" | awk -v f="$fn" '{
    a = $1; $1 = ""; $2 = ""; sub(/^  /, "")
    if (($0 == f || index($0, f "(") == 1) && index($0, "[clone") == 0) { print a; exit }
  }')
  if [ -z "$addr" ]; then
    echo "$program has no function $fn"
    status=1
    continue
  fi
  start=$((0x${range% *}))
  end=$((start + 0x${range#* }))
  at=$((0x$addr))
  if [ "$at" -ge "$start" ] && [ "$at" -lt "$end" ]; then
    echo "ok: $fn is in .text.hot"
  else
    echo "$fn (at 0x$addr) is outside .text.hot ($range)"
    status=1
  fi
done
exit $status
