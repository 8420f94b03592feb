#!/bin/sh
# Each program given must be a static executable that needs no shared library (no NEEDED entry in
# its dynamic section). Exit 77 (skipped) without readelf.
command -v readelf >/dev/null 2>&1 || { echo "readelf not found: skipped"; exit 77; }
status=0
for program in "$@"; do
  needed=$(readelf -d "$program" 2>/dev/null | grep '(NEEDED)')
  if [ -n "$needed" ]; then
    echo "$program is linked static but needs shared libraries:"
    echo "$needed"
    status=1
  else
    echo "ok: $program needs no shared library"
  fi
done
exit $status
