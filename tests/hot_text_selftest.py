#!/usr/bin/env python3
"""bench/hot_text.py's reading of a GNU ld link map and the names it gives input sections.

The map below has what real ones have: discarded sections (address 0) before the memory map,
section names long enough to wrap their address onto the next line, archive members given with
a full path, an object file of its own, an empty section, and symbol and fill lines between."""
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "hot_text", os.path.join(os.path.dirname(HERE), "bench", "hot_text.py"))
hot_text = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hot_text)

LONG = ("_ZN6ctxkit4apps10run_remindERKSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcE"
        "SaIcEEESaIS7_EERNS0_10AppContextE")
MAP = f"""Archive member included to satisfy reference by file (symbol)

Discarded input sections

 .text          0x0000000000000000        0x0 /usr/lib/x86_64-linux-gnu/libsqlite3.a(btree.o)
 .text._ZN3fmt2v912format_errorD2Ev
                0x0000000000000000        0xf lib/libctxkit.a(remind_app.cpp.o)

Memory Configuration

Name             Origin             Length             Attributes
*default*        0x0000000000000000 0xffffffffffffffff

Linker script and memory map

 .text.hot      0x00000000000013c0   0x1afbcd
 .text          0x00000000000013c0      0x2a1 /usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/libc.a(memcpy.o)
                0x00000000000013c0                memcpy
 *fill*         0x0000000000001661        0xf 
 .text.{LONG}
                0x0000000000001700      0x900 lib/libctxkit.a(remind_app.cpp.o)
                0x0000000000001700                ctxkit::apps::run_remind
 .text.unlikely 0x0000000000002000        0x0 lib/libctxkit.a(app.cpp.o)
 .text          0x0000000000002000       0x40 hooks/CMakeFiles/ctx-remind.dir/ctx_remind.cpp.o
                0x0000000000002000                main
"""


class HotTextMap(unittest.TestCase):
    def sections(self):
        with tempfile.NamedTemporaryFile("w", suffix=".map", delete=False) as f:
            f.write(MAP)
        try:
            return hot_text.input_sections(f.name)
        finally:
            os.unlink(f.name)

    def test_placed_code_sections_only_in_address_order(self):
        got = [(a, size, name) for a, size, name, _ in self.sections()]
        self.assertEqual(got, [(0x13C0, 0x2A1, ".text"), (0x1700, 0x900, ".text." + LONG),
                               (0x2000, 0x40, ".text")])

    def test_a_wrapped_name_keeps_its_file(self):
        wrapped = [s for s in self.sections() if s[2] == ".text." + LONG]
        self.assertEqual(wrapped[0][3], "lib/libctxkit.a(remind_app.cpp.o)")

    def test_patterns_name_the_archive_member_or_the_object(self):
        files = {name: path for _, _, name, path in self.sections()}
        self.assertEqual(hot_text.pattern(self.sections()[0][3], ".text"),
                         "*libc.a:memcpy.o(.text)")
        # A function of the library (in a section of its own) is named by the archive alone: which
        # unity group holds its file is the build's choice.
        self.assertEqual(hot_text.pattern(files[".text." + LONG], ".text." + LONG),
                         f"*libctxkit.a:*(.text.{LONG})")
        self.assertEqual(hot_text.pattern("lib/libctxkit.a(unity_ctxkit_hot3_cxx.cxx.o)",
                                          ".text.unlikely." + LONG),
                         f"*libctxkit.a:*(.text.unlikely.{LONG})")
        # A section without a function's name keeps its member; so does another archive's function.
        self.assertEqual(hot_text.pattern("lib/libctxkit.a(unity_ctxkit_hot3_cxx.cxx.o)", ".text.startup"),
                         "*libctxkit.a:unity_ctxkit_hot3_cxx.cxx.o(.text.startup)")
        self.assertEqual(hot_text.pattern("/usr/lib/libstdc++.a(fs_ops.o)", ".text." + LONG),
                         f"*libstdc++.a:fs_ops.o(.text.{LONG})")
        self.assertEqual(hot_text.pattern("hooks/CMakeFiles/ctx-remind.dir/ctx_remind.cpp.o", ".text"),
                         "*ctx_remind.cpp.o(.text)")


if __name__ == "__main__":
    sys.exit(unittest.main())
