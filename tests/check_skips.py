#!/usr/bin/env python3
"""Fails when a test was skipped that tests/ci-skips.txt does not allow.

Usage: check_skips.py JUNIT_XML ALLOWED_LIST

JUNIT_XML is what `ctest --output-junit` wrote; ALLOWED_LIST has one test name (or a name ending
in `*`, a prefix) per line, then ` # ` and why it may skip. Lines starting with `#` are comments.
"""
import sys
import xml.etree.ElementTree as ET


def allowed(path):
    names = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, why = line.partition(" # ")
            if not why.strip():
                sys.exit(f"check_skips: {path}: '{name}' gives no reason after ' # '")
            names.append(name.strip())
    return names


def matches(name, patterns):
    return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in patterns)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_skips.py JUNIT_XML ALLOWED_LIST")
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        sys.exit(f"check_skips: cannot read {sys.argv[1]}: {e}")
    patterns = allowed(sys.argv[2])
    skipped = []
    for case in root.iter("testcase"):
        status = case.get("status", "")
        if status in ("notrun", "disabled") or case.find("skipped") is not None:
            skipped.append(case.get("name", "?"))
    bad = [n for n in skipped if not matches(n, patterns)]
    for n in skipped:
        print(f"check_skips: skipped {n}{'' if n in bad else ' (allowed)'}")
    if bad:
        print(f"check_skips: {len(bad)} test(s) skipped that {sys.argv[2]} does not allow: "
              + ", ".join(bad), file=sys.stderr)
        return 1
    print(f"check_skips: {len(skipped)} skipped, all on the list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
