#!/bin/sh
# cmake/write-whole.sh: a file comes back with the same bytes and mode as a new inode (put in place
# by a rename), no temporary file is left, what is not a regular file is refused (exit 1) without
# touching it, and a write that fails leaves the file as it was, with one line on stderr.
set -u
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/cmake/write-whole.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "write_whole_check: $*" >&2; exit 1; }

head -c 3000000 /dev/urandom > "$dir/prog"
chmod 0751 "$dir/prog"
cp "$dir/prog" "$dir/expected"
before=$(stat -c %i "$dir/prog")
sh "$SCRIPT" "$dir/prog" || fail "exit $? on a regular file"
cmp -s "$dir/prog" "$dir/expected" || fail "the bytes changed"
[ "$(stat -c %a "$dir/prog")" = 751 ] || fail "mode $(stat -c %a "$dir/prog"), not 751"
[ "$(stat -c %i "$dir/prog")" != "$before" ] || fail "written in place, not replaced by a rename"
[ "$(ls "$dir" | wc -l)" -eq 2 ] || fail "left behind: $(ls "$dir")"

ln -s prog "$dir/link"
sh "$SCRIPT" "$dir/link" 2>"$dir/err" && fail "a symbolic link was accepted"
[ -L "$dir/link" ] || fail "the link was replaced"
grep -q "is not a regular file" "$dir/err" || fail "no error line for the link: $(cat "$dir/err")"
sh "$SCRIPT" "$dir/missing" 2>/dev/null && fail "a missing file was accepted"
[ ! -e "$dir/missing" ] || fail "a missing file was created"

# A write that fails half way (a file size limit below the file's size).
rm -f "$dir/link"
before=$(stat -c %i "$dir/prog")
(ulimit -f 1000; sh "$SCRIPT" "$dir/prog") 2>"$dir/err" && fail "a failed write was not reported"
cmp -s "$dir/prog" "$dir/expected" || fail "a failed write changed the file"
[ "$(stat -c %i "$dir/prog")" = "$before" ] || fail "a failed write replaced the file"
[ "$(wc -l < "$dir/err")" -eq 1 ] || fail "not one line on stderr: $(cat "$dir/err")"
grep -q "left as it was" "$dir/err" || fail "the line does not say the file is unchanged"
rm -f "$dir/err"
[ "$(ls "$dir" | wc -l)" -eq 2 ] || fail "left behind after a failure: $(ls "$dir")"
echo "write_whole_check: ok"
