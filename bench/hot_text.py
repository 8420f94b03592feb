#!/usr/bin/env python3
"""Writes bench/hot-text.ld: the code the per-call hooks run, placed together when they are linked.

A hook is a new process on every tool call, and on this kind of machine most of its time after
start goes to page faults: each first touch of a 64 KB window of its code costs one, and the code
one run executes is spread over the whole text of the program (about 50 windows). The linker
script this writes puts every input section holding a function that a run executed in front of
the rest, so that run touches about half as many windows. It lists input sections by archive
member and section name; a section it names that a later build no longer has is simply not
found, so a stale list costs speed, never correctness.

    bench/hot_text.py BUILD_DIR

BUILD_DIR: a Release build with benchmarks made with Ninja and, on a machine with AVX-512, with
-DCTXKIT_HAVE_AVX512BW=OFF (valgrind runs no AVX-512; the kernel's sections are named for both).
Needs valgrind and ninja.
Runs bench_remind_process to make its data (a 1 MB transcript, a home with the client's settings,
an Edit payload), links each profiled program again with a link map, runs it once under
callgrind on a payload like the client's, and maps each executed function to its input section.
"""
import bisect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(SRC, "tests/fixtures/claude-code-2.1.332/claude-opus-4-8/hooks")
OUT = os.path.join(SRC, "bench/hot-text.ld")


def made_from():
    """What the sections were named by: the commit, the compiler and fmt's version (the names
    are the compiler's mangling, fmt's inline namespace and CMake's object names)."""
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    compiler = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    fmt_version = "?"
    try:
        m = re.search(r"#define FMT_VERSION (\d+)", open("/usr/include/fmt/core.h", encoding="utf-8").read())
        fmt_version = m.group(1) if m else "?"
    except OSError:
        pass
    return f"{commit}; compiler: {compiler}; fmt: {fmt_version}"


def map_entries(lines):
    """(section, address, size, file) of each input section that a link map's lines list. A long
    section name stands on a line of its own, its address, size and file on the next."""
    pending = None
    for line in lines:
        m = re.match(r"^ (\.\S+)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m:
            yield m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4).strip()
        else:
            m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if pending and m:
                yield pending, int(m.group(1), 16), int(m.group(2), 16), m.group(3).strip()
        pending = None


def input_sections(map_path):
    """The code input sections of a link map: sorted (address, size, section, file)."""
    with open(map_path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("Linker script and memory map"))
    return sorted((addr, size, name, path) for name, addr, size, path in map_entries(lines[start:])
                  if name.startswith(".text") and addr and size)


def pattern(path, section):
    """The linker script's name for one input section: archive:member(section) or object. The
    library's files are compiled in unity groups with a section per function: a function's section
    is named by the archive alone (the group a file lands in is the build's choice); a section
    without a function's name keeps its member."""
    m = re.match(r"(.*/)?([^/]+\.a)\((.+)\)$", path)
    if m and m.group(2) == "libctxkit.a" and re.match(r"^\.text\.(unlikely\.|startup\.|hot\.)?[^.]", section) \
            and section not in (".text.unlikely", ".text.startup", ".text.hot"):
        return f"*{m.group(2)}:*({section})"
    where = f"*{m.group(2)}:{m.group(3)}" if m else "*" + os.path.basename(path)
    return f"{where}({section})"


def executed_functions(binary, stdin_path, env, tmp, args=()):
    """Addresses of the functions one run of `binary` executed (callgrind)."""
    out = os.path.join(tmp, os.path.basename(binary) + ".cg")
    with open(stdin_path, "rb") as stdin:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no", binary, *args],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       check=True)
    names = {l[3:].strip() for l in open(out, encoding="utf-8", errors="replace")
             if l.startswith("fn=")}
    nm = subprocess.run(["nm", "-S", "--defined-only", "-C", binary], capture_output=True,
                        text=True, check=True).stdout
    addrs = []
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwWiI" and parts[3] in names:
            addrs.append(int(parts[0], 16))
    return addrs


def fixture_payload(event, **fields):
    with open(os.path.join(FIXTURES, event + ".json"), encoding="utf-8") as f:
        payload = json.load(f)["payloads"][0]
    payload.update(fields)
    return payload


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    if not os.access(f"{build}/bench/bench_remind_process", os.X_OK):
        sys.exit(f"hot_text.py: {build} has no bench/bench_remind_process: give a Release build "
                 "with benchmarks (bench/run.sh makes build-bench)")
    if shutil.which("valgrind") is None:
        sys.exit("hot_text.py: valgrind not found (it records which functions a call executes)")
    data = os.environ.get("CTXKIT_BENCH_DIR", "/var/tmp/ctxkit-bench")
    subprocess.run([f"{build}/bench/bench_remind_process", f"{build}/hooks",
                    f"{build}/bench/stdin_floor", "1", "payload"],
                   stdout=subprocess.DEVNULL, env=dict(os.environ, CTXKIT_BENCH_DIR=data))
    # (Its exit status says whether the speed targets were met, which does not matter here.)
    home = os.path.join(data, "home")
    edit_payload = os.path.join(data, "payload-edit-1mb.json")
    with open(edit_payload, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace")
    session = re.search(r'"session_id":"([^"]+)"', head).group(1)
    transcript = re.search(r'"transcript_path":"([^"]+)"', head).group(1)
    env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": os.path.join(home, "state"),
           "XDG_CONFIG_HOME": os.path.join(home, "config")}
    common = {"session_id": session, "transcript_path": transcript, "cwd": home}
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, payload):
            path = os.path.join(tmp, name + ".json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(payload, f)
            return path

        # program -> [(payload, arguments, set-up runs of the built program before it: (payload,
        # arguments))]
        runs = {"ctx-remind": [(edit_payload, [], [])]}
        for program, event in (("ctx-status", "StatusLine"), ("ctx-gate", "PreToolUse")):
            runs[program] = [(write(event, fixture_payload(event, **common)), [], [])]
        # ctx-pin's hooks with 20 pins: PreCompact, and the first prompt after a compaction whose
        # summary dropped them (PostCompact leaves the marker that prompt finds).
        pins = [["add", f"fact {i}: the service {i} listens on port {8000 + i}"] for i in range(20)]
        pin_env = dict(env, CLAUDE_CODE_SESSION_ID=session, CLAUDE_PROJECT_DIR=home)
        post = write("PostCompact", dict(common, hook_event_name="PostCompact", trigger="auto",
                                         compact_summary="<summary>nothing kept</summary>"))
        runs["ctx-pin"] = [
            (write("PreCompact", dict(common, hook_event_name="PreCompact", trigger="auto")),
             ["--hook"], [(None, a) for a in pins]),
            (write("UserPromptSubmit", dict(common, hook_event_name="UserPromptSubmit", prompt="go on")),
             ["--hook"], [(post, ["--hook"])]),
        ]
        # ctx-cap on a Bash output over its threshold (archived, then the preview).
        log = "".join(f"PASSED tests/test_{i}.py::test_case\n" for i in range(600))
        runs["ctx-cap"] = [(write("PostToolUse-cap", dict(
            common, hook_event_name="PostToolUse", tool_name="Bash", tool_use_id="toolu_hot_text",
            tool_input={"command": "pytest"},
            tool_response={"stdout": log, "stderr": "", "interrupted": False, "isImage": False})),
            [], [])]
        chosen, seen = [], set()
        for program, program_runs in runs.items():
            command = subprocess.run(["ninja", "-C", build, "-t", "commands", f"hooks/{program}"],
                                     capture_output=True, text=True, check=True).stdout
            link = command.strip().split("\n")[-1]
            linked = os.path.join(tmp, program)
            link = link.replace(f"-o hooks/{program}", f"-o {shlex.quote(linked)} "
                                f"-Wl,-Map={shlex.quote(linked)}.map")
            subprocess.run(link, shell=True, cwd=build, check=True)
            sections = input_sections(linked + ".map")
            starts = [s[0] for s in sections]
            hot = set()
            for payload, args, setup in program_runs:
                for setup_payload, setup_args in setup:
                    with open(setup_payload or os.devnull, "rb") as stdin:
                        subprocess.run([f"{build}/hooks/{program}", *setup_args], stdin=stdin,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=pin_env, check=False)
                run_env = pin_env if program == "ctx-pin" else env
                for addr in executed_functions(linked, payload, run_env, tmp, args):
                    k = bisect.bisect_right(starts, addr) - 1
                    if k >= 0 and sections[k][0] <= addr < sections[k][0] + sections[k][1]:
                        hot.add(k)
            size = sum(sections[k][1] for k in hot)
            print(f"{program}: {len(hot)} input sections executed, {size // 1024} KB",
                  file=sys.stderr)
            for k in sorted(hot):
                p = pattern(sections[k][3], sections[k][2])
                # valgrind runs no AVX-512: the profiled build has the payload scan's AVX2 kernel
                # (CTXKIT_HAVE_AVX512BW=OFF), and a build for a machine with AVX-512 names the
                # same functions in the kernel's namespace of that name.
                variants = [p]
                if "10json_block4avx2" in p:
                    variants.append(p.replace("10json_block4avx2", "10json_block6avx512"))
                for v in variants:
                    if v not in seen:
                        seen.add(v)
                        chosen.append(v)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("/* Written by bench/hot_text.py: the input sections holding the code that\n"
                "   ctx-remind, ctx-status, ctx-gate, ctx-pin and ctx-cap execute on a call, placed\n"
                "   together in front\n"
                "   of the rest of the text (fewer page faults at start). Regenerate it after\n"
                "   large changes; a section it names that is gone is simply not found, and the\n"
                "   test hot_text_patterns_match fails when too few of them still match.\n"
                f"   made from: {made_from()} */\n")
        f.write("SECTIONS\n{\n  .text.hot :\n  {\n")
        for p in chosen:
            f.write(f"    {p}\n")
        f.write("  }\n}\nINSERT BEFORE .text;\n")
    print(f"wrote {OUT}: {len(chosen)} input sections", file=sys.stderr)


if __name__ == "__main__":
    main()
