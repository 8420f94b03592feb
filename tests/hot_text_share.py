#!/usr/bin/env python3
"""Fails when too few of bench/hot-text.ld's patterns still match anything in a program's link.

Usage: hot_text_share.py MIN_SHARE LINK_MAP...

Each LINK_MAP is the map the linker wrote for a program linked with the script (hooks/CMakeLists.txt
asks for <program>.map); the script serves several programs, so a pattern counts as matching when
it matches in one of them. Under the output section .text.hot the map repeats each pattern of the
script, each followed by the input sections it placed: a pattern followed by none no longer
matches (a function renamed or moved, another compiler's mangling, another fmt, another object
name), and the code it named is back among the rest. Prints the share; exit 1 below MIN_SHARE
(0 to 1), 77 (skipped) when the map has no .text.hot (the script was not applied).
"""
import re
import sys


def matches(lines):
    """{pattern: whether it placed an input section} of the .text.hot block of a link map's lines,
    or None when the map has no such block."""
    inside = False
    found = {}
    current = None
    for line in lines:
        if not inside:
            if re.match(r"^\.text\.hot\b", line):
                inside = True
            continue
        if line and not line[0].isspace():
            break  # the next output section
        if line.startswith(" *fill*"):
            continue  # padding between the sections, not a pattern
        if line.startswith(" *"):
            current = line.strip()
            found.setdefault(current, False)
        elif current is not None and re.match(r"^ \.\S+", line):
            found[current] = True
    return found if inside else None


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: hot_text_share.py MIN_SHARE LINK_MAP...")
    minimum = float(sys.argv[1])
    union = {}
    for path in sys.argv[2:]:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                found = matches(f.read().split("\n"))
        except OSError as e:
            sys.exit(f"hot_text_share: cannot read {path}: {e.strerror}")
        if found is None:
            print(f"{path}: no .text.hot section: the script was not applied (skipped)")
            return 77
        for pattern, hit in found.items():
            union[pattern] = union.get(pattern, False) or hit
    patterns, matched = len(union), sum(union.values())
    got = matched / patterns if patterns else 0.0
    print(f"{matched} of {patterns} patterns of the hot-text script match in "
          f"{len(sys.argv) - 2} programs ({got:.0%}; at least {minimum:.0%} wanted)")
    if got < minimum:
        print("hot_text_share: the hot-text script is stale; regenerate it: bench/run.sh remind "
              "(for its data), then bench/hot_text.py on a Ninja build (see its header)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
