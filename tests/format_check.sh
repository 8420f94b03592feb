#!/usr/bin/env bash
# The `format` test: every C++ file of the project (lib/, hooks/, tests/, bench/; not the
# layering check's cases, which are data) as .clang-format wants it, by
# `clang-format --dry-run --Werror`. The tree is formatted with clang-format 14 (Debian 12's);
# another major version lays some constructs out differently, so without clang-format 14 the test
# is skipped (exit 77) with a line saying why. CLANG_FORMAT names the program to use.
# Usage: format_check.sh [SOURCE_DIR]
set -uo pipefail
SRC="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
CF=""
for c in ${CLANG_FORMAT:-} clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -qE 'version 14\.'; then
    CF="$c"
    break
  fi
done
if [ -z "$CF" ]; then
  echo "format: skipped: no clang-format 14 found (apt-get install clang-format-14, or set CLANG_FORMAT)"
  exit 77
fi
cd "$SRC" || exit 1
mapfile -d '' files < <(find lib hooks tests bench \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) \
                          -not -path 'tests/layering_cases/*' -print0 | sort -z)
out="$("$CF" --dry-run --Werror "${files[@]}" 2>&1)"
if [ -n "$out" ]; then
  bad=$(printf '%s\n' "$out" | sed -nE 's/^([^:]+):[0-9]+:[0-9]+: error: .*/\1/p' | sort -u)
  printf '%s\n' "$out" | head -n 20
  echo "format: $(printf '%s\n' "$bad" | grep -c .) of ${#files[@]} files differ from .clang-format:"
  printf '  %s\n' $bad | head -n 40
  echo "format: fix with: $CF -i FILE…"
  exit 1
fi
echo "format: ok (${#files[@]} files, $("$CF" --version))"
