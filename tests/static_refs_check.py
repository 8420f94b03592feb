#!/usr/bin/env python3
"""Each program given is linked static with the linker's warnings silenced (hooks/CMakeLists.txt),
and a silenced static link also writes a binary when a function it needs is defined nowhere but a
shared library (libsimdjson's, say): the call goes to address 0 and the hook crashes when it gets
there. Every symbol that the library's object files in the program (its link map names them) leave
undefined must be defined in the program.

    static_refs_check.py LIBRARY.a PROGRAM MAP [PROGRAM MAP]...

Exit 0 when every program passes, 1 when one does not, 77 (skipped) without nm.
"""
import os
import re
import shutil
import subprocess
import sys


def symbols(argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2 != 0:
        print(__doc__.strip().splitlines()[-3].strip())
        return 2
    if not shutil.which("nm"):
        print("nm not found: skipped")
        return 77
    library = sys.argv[1]
    base = os.path.basename(library)
    member = re.compile(re.escape(base) + r"\(([^)]+\.o)\)")
    # Every object's undefined symbols, in one run: "LIB[member.o]: name U".
    undefined_of = {}
    for line in symbols(["nm", "-A", "-u", "--format=posix", library]):
        head, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) >= 2 and fields[1] == "U" and head.endswith("]") and "[" in head:
            undefined_of.setdefault(head[head.rindex("[") + 1:-1], set()).add(fields[0])
    failed = False
    for program, link_map in zip(sys.argv[2::2], sys.argv[3::2]):
        with open(link_map, encoding="utf-8", errors="replace") as f:
            members = sorted(set(member.findall(f.read())))
        if not members:
            print(f"{program}: its map {link_map} names no object of {base}")
            failed = True
            continue
        undefined = set().union(*(undefined_of.get(m, set()) for m in members))
        defined = {line.split()[0] for line in symbols(["nm", "--defined-only", "--format=posix", program])}
        missing = sorted(undefined - defined)
        if missing:
            failed = True
            print(f"{program}: {len(missing)} symbols its code calls are defined nowhere in it "
                  "(a shared library's?):")
            for name in missing[:20]:
                print(f"  {name}")
        else:
            print(f"ok: {program}: the {len(undefined)} symbols its {len(members)} objects of {base} "
                  "need are all in it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
