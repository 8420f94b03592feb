#!/bin/sh
# The program given was linked with hooks/hot-text.ld: it has a .text.hot section, and each
# function named lies inside it (a C++ name without its parameters: the first overload that is not
# a split-off cold part). Exit 77 (skipped) without readelf or nm.
command -v readelf >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || { echo "readelf or nm not found: skipped"; exit 77; }
program=$1
shift
range=$(readelf -SW "$program" | awk '$2 == ".text.hot" { print $4, $6 }')
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
  if python3 -c "import sys; s, n = (int(x, 16) for x in sys.argv[1].split()); a = int(sys.argv[2], 16); sys.exit(0 if s <= a < s + n else 1)" "$range" "$addr"; then
    echo "ok: $fn is in .text.hot"
  else
    echo "$fn (at 0x$addr) is outside .text.hot ($range)"
    status=1
  fi
done
exit $status
