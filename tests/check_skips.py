#!/usr/bin/env python3
"""Counts what a test run ran, and with --allowed fails when a test was skipped that the list
does not allow.

Usage: check_skips.py JUNIT_XML [GTEST_XML_DIR] [--allowed ALLOWED_LIST]

JUNIT_XML is what `ctest --output-junit` wrote. The test programs run as one CTest test per
GoogleTest suite (cmake/GTestSuites.cmake), each writing GoogleTest's XML report into
GTEST_XML_DIR: their cases are counted and judged from those reports, and the CTest tests of the
suites themselves are not counted again. ALLOWED_LIST has one test name (Suite.Case, or a CTest
test's name; a name ending in `*` is a prefix) per line, then ` # ` and why it may skip. Lines
starting with `#` are comments.

Prints "tests: N, of which V re-run a recording with its keys reordered, spaced or extended".
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

VARIANT = re.compile(r"_(Reordered|Spaced|Extended)$")


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


def parse(path):
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        sys.exit(f"check_skips: cannot read {path}: {e}")


def suite_reports(directory):
    """(name, skipped) of every case GoogleTest's XML reports in `directory` hold."""
    cases = []
    if not directory or not os.path.isdir(directory):
        return cases
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".xml"):
            continue
        for case in parse(os.path.join(directory, entry)).iter("testcase"):
            name = f"{case.get('classname', '?')}.{case.get('name', '?')}"
            skipped = case.get("result") == "skipped" or case.find("skipped") is not None
            cases.append((name, skipped))
    return cases


def ctest_cases(junit, have_suites):
    """(name, skipped) of CTest's own tests, without those that ran a GoogleTest suite."""
    cases = []
    for case in parse(junit).iter("testcase"):
        name = case.get("name", "?")
        if have_suites and re.match(r"^(unit|e2e):", name):
            continue
        status = case.get("status", "")
        skipped = status in ("notrun", "disabled") or case.find("skipped") is not None
        cases.append((name, skipped))
    return cases


def main(argv):
    args, allowed_list = [], None
    i = 0
    while i < len(argv):
        if argv[i] == "--allowed" and i + 1 < len(argv):
            allowed_list = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if not 1 <= len(args) <= 2:
        sys.exit("usage: check_skips.py JUNIT_XML [GTEST_XML_DIR] [--allowed ALLOWED_LIST]")
    if len(args) == 2 and not os.path.isdir(args[1]):
        sys.exit(f"check_skips: {args[1]} is not a folder of GoogleTest reports")
    suites = suite_reports(args[1] if len(args) == 2 else None)
    cases = suites + ctest_cases(args[0], bool(suites))
    variants = sum(1 for name, _ in cases if VARIANT.search(name))
    print(f"tests: {len(cases)}, of which {variants} re-run a recording with its keys reordered, "
          "spaced or extended")
    if allowed_list is None:
        return 0
    patterns = allowed(allowed_list)
    skipped = [name for name, was_skipped in cases if was_skipped]
    bad = [n for n in skipped if not matches(n, patterns)]
    for n in skipped:
        print(f"check_skips: skipped {n}{'' if n in bad else ' (allowed)'}")
    if bad:
        print(f"check_skips: {len(bad)} test(s) skipped that {allowed_list} does not allow: "
              + ", ".join(bad), file=sys.stderr)
        return 1
    print(f"check_skips: {len(skipped)} skipped, all on the list")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
