#!/usr/bin/env python3
"""Whole-process benchmark of ctx-cap, the PostToolUse cap of large outputs.

    bench_cap.py BIN_DIR FLOOR_BIN [RUNS]

Each run is a fresh process started with posix_spawn, the payload on stdin, stdout to /dev/null,
timed from the spawn to its wait4, and its peak RSS taken from wait4's rusage. Runs are
interleaved with the program they are compared with. Prints medians and ratios and checks:
    under:   a Bash output under the threshold (2 KB): ctx-cap median <= 1.5x the floor (a C
             program that reads stdin to its end, bench/stdin_floor.c) on the same payload
    capped:  a 10 MB Bash output capped and archived: ctx-cap median <= 3x `cat` of the 10 MB
             output to a file
    memory:  ctx-cap's peak RSS on the 10 MB output <= 2x the output's size
The state folder is a fresh temporary one (each capped run archives 10 MB there; removed after).
Spawning from Python adds the same fixed cost to both sides of a ratio.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time


def spawn(argv, stdin_path, stdout_path, env):
    fin = os.open(stdin_path, os.O_RDONLY)
    fout = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, fin, 0), (os.POSIX_SPAWN_DUP2, fout, 1)])
        _, status, usage = os.wait4(pid, 0)
        dt = time.perf_counter() - t0
    finally:
        os.close(fin)
        os.close(fout)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_cap: {argv[0]} exited {os.waitstatus_to_exitcode(status)}")
    return dt, usage.ru_maxrss * 1024


def payload(text):
    return json.dumps({"session_id": "bench", "transcript_path": "/nowhere/bench.jsonl", "cwd": "/home/me/app",
                       "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_bench",
                       "tool_input": {"command": "make test"},
                       "tool_response": {"stdout": text, "stderr": "", "interrupted": False, "isImage": False,
                                         "noOutputExpected": False}})


def compare(a, b, runs, between=None):
    """Interleaved runs of two (argv, stdin, stdout) specs: medians and peak RSS of each.
    `between`, when given, runs before each pair, untimed."""
    ta, tb, ma, mb = [], [], 0, 0
    for _ in range(runs):
        if between:
            between()
        dt, rss = spawn(*a)
        ta.append(dt)
        ma = max(ma, rss)
        dt, rss = spawn(*b)
        tb.append(dt)
        mb = max(mb, rss)
    return statistics.median(ta), statistics.median(tb), ma, mb


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bin_dir, floor = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    cap = os.path.join(bin_dir, "ctx-cap")
    work = tempfile.mkdtemp(prefix="ctxkit-bench-cap-")
    try:
        env = {"PATH": "/usr/bin:/bin", "HOME": os.path.join(work, "home"),
               "XDG_STATE_HOME": os.path.join(work, "state"), "XDG_CONFIG_HOME": os.path.join(work, "config")}
        os.makedirs(env["HOME"])
        small = os.path.join(work, "small.json")
        with open(small, "w") as f:
            f.write(payload("".join(f"line {i} of a short output\n" for i in range(80))))
        line = "FAILED tests/test_x.py::test_case_%07d - AssertionError: expected 1, got 2\n"
        text = "".join(line % i for i in range((10 << 20) // len(line % 0)))
        big_text = os.path.join(work, "big.txt")
        with open(big_text, "w") as f:
            f.write(text)
        big = os.path.join(work, "big.json")
        with open(big, "w") as f:
            f.write(payload(text))
        out = os.path.join(work, "out")
        status = 0

        m_cap, m_floor, _, _ = compare(([cap], small, out, env), ([floor], small, out, env), runs)
        r = m_cap / m_floor
        print(f"under threshold (2 KB): ctx-cap {m_cap * 1e3:.3f} ms, floor {m_floor * 1e3:.3f} ms, "
              f"ratio {r:.2f} (target <= 1.5)")
        status |= r > 1.5

        cat = shutil.which("cat")
        big_runs = max(5, runs // 20)
        copy = os.path.join(work, "copy")
        outputs = os.path.join(env["XDG_STATE_HOME"], "ctxkit", "archive", "tool-outputs")

        def fresh():
            # Each capped output is a new tool call's (a new handle, a new file): the previous
            # run's archived output and cat's copy are removed, so that neither side replaces a
            # 10 MB file (which costs the file system the old file's pages, and on ext4 starts
            # writing the new one back at the rename).
            for name in ("toolu_bench.txt", "toolu_bench.json"):
                try:
                    os.unlink(os.path.join(outputs, name))
                except FileNotFoundError:
                    pass
            try:
                os.unlink(copy)
            except FileNotFoundError:
                pass

        m_cap, m_cat, rss, _ = compare(([cap], big, out, env), ([cat], big_text, copy, env), big_runs, fresh)
        r = m_cap / m_cat
        print(f"10 MB capped and archived: ctx-cap {m_cap * 1e3:.1f} ms, cat to a file {m_cat * 1e3:.1f} ms, "
              f"ratio {r:.2f} (target <= 3)")
        status |= r > 3
        with open(out) as f:
            assert "updatedToolOutput" in f.read(), "the 10 MB output was not capped"
        # Peak RSS through /usr/bin/time: a child spawned from this process shares its memory until
        # exec, and wait4's ru_maxrss would count this process's 10 MB of text.
        import subprocess
        with open(big, "rb") as fin:
            t = subprocess.run(["/usr/bin/time", "-f", "%M", cap], stdin=fin, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env, text=True)
        rss = int(t.stderr.strip().splitlines()[-1]) * 1024
        m = rss / len(text)
        print(f"peak RSS on the 10 MB output: {rss / 1048576:.1f} MB, {m:.2f}x the output (target <= 2)")
        status |= m > 2
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
