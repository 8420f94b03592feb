#!/bin/sh
# Writes each FILE again in one piece: the same bytes and mode, put in place by a rename (a program
# that is running keeps its old copy). The kernel holds a freshly written file in its page cache in
# pieces the size of the writes that made it; the linker, strip and `cmake --install` write 4 KB at
# a time, and a program held in 4 KB pieces starts about 15 % slower than one written whole
# (docs/performance.md). Used by `cmake --install` and by install.sh for the plugin's programs.
# A file that cannot be written again is left as it was, with one line on stderr (exit 1).
#
#   write-whole.sh FILE...
set -u
status=0
for f in "$@"; do
  if [ ! -f "$f" ] || [ -L "$f" ]; then
    echo "write-whole.sh: error: $f is not a regular file" >&2
    status=1
    continue
  fi
  # A new file of our own beside it (mktemp: not one that someone put there first).
  if ! tmp=$(mktemp -- "$f.whole.XXXXXX" 2>/dev/null); then
    echo "write-whole.sh: error: cannot create a file beside $f (left as it was)" >&2
    status=1
    continue
  fi
  if ! why=$({ dd if="$f" of="$tmp" bs=64M status=none && chmod --reference="$f" -- "$tmp" &&
              mv -f -- "$tmp" "$f"; } 2>&1); then
    rm -f -- "$tmp"
    echo "write-whole.sh: error: could not write $f again, left as it was: $(printf '%s' "$why" | head -n 1)" >&2
    status=1
  fi
done
exit "$status"
