#!/usr/bin/env python3
"""Measures the ctx-run context modes on a workload and prints a Markdown table.

Usage: measure_modes.py [BIN_DIR] [--model M] [--work DIR] [--workload short|long]
       (BIN_DIR: the built programs, default build/hooks; the client as for the live checks)

short (the default): the same 3-task file runs in continuous, fresh-per-task, fresh-per-iteration,
hybrid and auto mode, one run after the other in one project, against the real Claude Code client and the fake API of this
folder with usage estimated from the size of each request (`usage_mode: estimate`: about 4 bytes
of system prompt, tool schemas and conversation a token, reported as cache reads but 5 input
tokens; output 20 tokens a reply). Each task takes 2 iterations: the first runs a command and ends
without the done marker, the second runs another command and reports done; each command prints
about 12 KB (2,500 numbered lines, as reading a mid-sized file would), which stays in the
conversation of the session it ran in. Between runs the
files the agent wrote are removed, so every run starts from the same project; .ctxkit/ is in the
repository's info/exclude, so the run records are not "uncommitted files" in the anchor or "files
changed" in a summary. The figures are `ctx-run report --all --json`'s.

long: 5 tasks of 2 iterations, each iteration running two commands that print about 24 KB each
(the client keeps at most 30,000 characters of a command's output), so that a continuous session
grows by about 16,000 tokens an iteration by this estimate and passes auto's fresh_at (50 %) and
compact_at (75 %) of a 200,000-token window, while staying below it. "peak context" is the largest context after a call
(the last message's input, cache creation and cache read, as the meter counts it).
"""
import json
import os
import subprocess
import sys
import tempfile

import live_common

MODES = ["continuous", "fresh-per-task", "fresh-per-iteration", "hybrid", "auto"]
TASKS = [("t1", "Parse the input file", "Read input.txt and write the parsed fields to fields.txt."),
         ("t2", "Check the parsed fields", "Compare fields.txt with the expected values and note mismatches."),
         ("t3", "Write the notes", "Summarise the work in notes.md.")]


LONG_TASKS = TASKS + [("t4", "Extend the parser", "Handle the optional fields in input.txt."),
                      ("t5", "Check the extension", "Compare the new fields with the expected values.")]


def long_turns():
    out = []
    for tid, _, _ in LONG_TASKS:
        for part, done in (("a", False), ("b", True)):
            for k, (lo, hi) in enumerate(((1, 5000), (5001, 10000))):
                out.append({"text": "Working.", "tool": "Bash",
                            "input": {"command": f"seq {lo} {hi} > {tid}-{part}{k}.txt && cat {tid}-{part}{k}.txt", "description": "step"}})
            out.append({"text": f"Finished.\nDecision: task {tid} keeps its output in {tid}-b0.txt\nCTXKIT-TASK: DONE" if done
                        else "Made a start; more to do next time."})
    return out


def turns():
    out = []
    for i, (tid, _, _) in enumerate(TASKS):
        out += [{"text": "Starting.", "tool": "Bash", "input": {"command": f"seq 1 2500 | tee {tid}-a.txt", "description": "step"}},
                {"text": "Made a start; more to do next time."},
                {"text": "Continuing.", "tool": "Bash", "input": {"command": f"seq 2501 5000 | tee {tid}-b.txt", "description": "step"}},
                {"text": f"Finished.\nDecision: task {tid} keeps its output in {tid}-b.txt\nCTXKIT-TASK: DONE"}]
    return out


def main():
    a = live_common.parse_args(__doc__, ["ctx-run"], lambda ap: ap.add_argument("--workload", choices=["short", "long"], default="short"))
    tasks = LONG_TASKS if a.workload == "long" else TASKS
    from harness import Harness  # noqa: E402 (the harness parse_args chose)
    model = a.models[0] if a.model else "claude-sonnet-4-5"
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-measure-modes-")
    h = Harness(os.path.join(work, "measure"))
    with open(os.path.join(h.proj, "PROMPT.md"), "w") as f:
        f.write("Work in small steps. Keep every file short. Run the checks before reporting a task done.\n")
    with open(os.path.join(h.proj, "tasks.yaml"), "w") as f:
        for tid, title, desc in tasks:
            f.write(f"- id: {tid}\n  title: \"{title}\"\n  description: \"{desc}\"\n")
    git = ["git", "-C", h.proj, "-c", "user.name=live", "-c", "user.email=live@localhost"]
    subprocess.run(git + ["add", "PROMPT.md", "tasks.yaml"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "tasks"], check=True)
    with open(os.path.join(h.proj, ".git", "info", "exclude"), "a") as f:
        f.write(".ctxkit/\n")
    ctx_run = os.path.join(a.bin_dir, "ctx-run")
    script = {"turns": long_turns() if a.workload == "long" else turns(), "usage_mode": "estimate"}
    h.start_server(script)
    env = h.env({"CTXKIT_ROLLOVER_CLAUDE_BIN": h.claude_bin})
    try:
        for mode in MODES:
            h.api.load(script)  # rewinds the turns
            p = subprocess.run([ctx_run, "tasks.yaml", "--context-mode", mode, "--model", model,
                                "--claude-arg=--dangerously-skip-permissions"],
                               cwd=h.proj, env=env, capture_output=True, text=True, timeout=1800)
            if p.returncode != 0:
                sys.exit(f"measure_modes: {mode}: ctx-run exited {p.returncode}: {p.stderr[-1500:]}")
            subprocess.run(git + ["clean", "-q", "-f"], check=True)  # the agent's files (not .ctxkit/: excluded)
    finally:
        h.stop_server()
    rep = subprocess.run([ctx_run, "report", "--all", "--json"], cwd=h.proj, env=env, capture_output=True, text=True, check=True)
    reports = json.loads(rep.stdout)
    version = subprocess.run([h.claude_bin, "--version"], env=env, capture_output=True, text=True).stdout.strip()
    what = ("5 tasks x 2 iterations, each iteration two commands printing about 24 KB each" if a.workload == "long"
            else "3 tasks x 2 iterations, each iteration one command printing about 12 KB")
    print(f"Claude Code {version.split()[0] if version else '?'}, model {model}, fake API with size-estimated usage; {what}.\n")
    print("| mode | sessions | context resets | compactions | iterations | input | cache creation | cache read | output "
          "| total tokens | peak context | anchoring tokens (est.) | anchoring share | wall time |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    base = None
    for r in reports:
        t = r["totals"]
        u = t["usage"]
        base = base or u["total"]
        print(f"| {r['mode']} | {t['resets'] + 1} | {t['resets']} | {t['compactions']} | {t['iterations']} | {u['input']:,} "
              f"| {u['cache_creation']:,} | {u['cache_read']:,} | {u['output']:,} | {u['total']:,} ({u['total'] / base:.2f}x) "
              f"| {t.get('peak_context', 0):,} "
              f"| {t['anchoring_tokens']:,} | {100 * t['anchoring_share']:.1f} % | {t['wall_ms'] / 1000:.1f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
