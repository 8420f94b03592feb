#!/usr/bin/env python3
"""Each program given is linked static with the linker's warnings silenced (hooks/CMakeLists.txt),
and a silenced static link also writes a binary when a function it needs is defined nowhere but a
shared library (libsimdjson's, say): the call goes to address 0 and the hook crashes when it gets
there. Every symbol that the library's object files in the program (its link map names them) leave
undefined, and that a section the link kept refers to, must be defined in the program. (The
programs are linked with --gc-sections: a section the map lists as discarded, a function of a unity
group the program never calls, may refer to anything.)

    static_refs_check.py LIBRARY.a PROGRAM MAP [PROGRAM MAP]...

Exit 0 when every program passes, 1 when one does not, 77 (skipped) without nm or objdump.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys

# The link map's reader of bench/hot_text.py (which writes the hot-text script from the same maps).
_spec = importlib.util.spec_from_file_location(
    "hot_text", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                             "hot_text.py"))
hot_text = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hot_text)


def symbols(argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def discarded_sections(map_text, base):
    """{(member, section)} of the library's input sections the link discarded (the map's
    "Discarded input sections": garbage-collected, or a duplicate of a COMDAT group)."""
    start = map_text.find("Discarded input sections")
    end = map_text.find("Memory Configuration", start)
    if start < 0:
        return set()
    member = re.compile(re.escape(base) + r"\(([^)]+\.o)\)$")
    out = set()
    for name, _, _, path in hot_text.map_entries(map_text[start:end].split("\n")):
        m = member.search(path)
        if m:
            out.add((m.group(1), name))
    return out


def references(library):
    """{member: {section: {symbol}}}: the symbols each section of each object refers to (objdump
    writes the sections' whole names, where readelf cuts long ones)."""
    out, member, section = {}, None, None
    for line in symbols(["objdump", "-r", library]):
        m = re.match(r"^(\S+\.o):\s+file format", line)
        if m:
            member, section = m.group(1), None
            continue
        m = re.match(r"^RELOCATION RECORDS FOR \[(.+)\]:$", line)
        if m:
            section = m.group(1)
            continue
        fields = line.split()
        if member and section and len(fields) == 3 and re.match(r"^[0-9a-f]{16}$", fields[0]):
            out.setdefault(member, {}).setdefault(section, set()).add(
                re.sub(r"[-+]0x[0-9a-f]+$", "", fields[2]))
    return out


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2 != 0:
        print(__doc__.strip().splitlines()[-3].strip())
        return 2
    if not shutil.which("nm") or not shutil.which("objdump"):
        print("nm or objdump not found: skipped")
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
    referenced = references(library)
    failed = False
    for program, link_map in zip(sys.argv[2::2], sys.argv[3::2]):
        with open(link_map, encoding="utf-8", errors="replace") as f:
            text = f.read()
        members = sorted(set(member.findall(text)))
        if not members:
            print(f"{program}: its map {link_map} names no object of {base}")
            failed = True
            continue
        dropped = discarded_sections(text, base)
        undefined = set()
        for m in members:
            for section, names in referenced.get(m, {}).items():
                # .eh_frame's entries for the discarded functions are dropped with them.
                if (m, section) not in dropped and section != ".eh_frame":
                    undefined |= names & undefined_of.get(m, set())
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
