#!/usr/bin/env python3
"""ctx-run's own overhead per iteration, in each context mode.

    bench_run_overhead.py --ctx-run PATH/ctx-run --claude PATH/claude_standin [--tasks N] [--exit-ms N]

Each mode runs N tasks (default 50) of one iteration each, in a new git repository with a
PROMPT.md, against claude_standin (bench/claude_standin.c: prints a fixed stream-json answer that
reports the task done and exits), twice: once with a stand-in that exits as soon as it has printed
its result (nothing of the runner's work can hide behind the client: the worst case), once with
one that stays --exit-ms ms (default 40) after its result before exiting, as the real client does
while it shuts down (Claude Code 2.1.197 -p: 43-53 ms median from its result line to its exit,
measured here; every `iteration` event has it as client_exit_ms). ctx-run asks git for the next
session's state as soon as the result is printed, so in the second case git runs during the
client's exit.

    bench_run_overhead.py --ctx-run PATH/ctx-run --live [--tasks N] [--model M]

runs the same against the real Claude Code client (tests/live: CLAUDE_BIN, or the pinned client
install_client.sh installs) and the fake API of tests/live, which answers every call with the done
marker at once (default 10 tasks a mode; each call takes the client about 1.5 s). Every `iteration` event of the run's events.jsonl has runner_ms,
the iteration's wall time in ctx-run minus the time inside the client (for a fresh session that
includes assembling the anchor: reading PROMPT.md and asking git for the branch, the status and
the last commits); printed: its median and 90th percentile per mode, beside the report's
runner_ms_median and the client's median (the stand-in's process start, not counted as overhead);
and "whole run": ctx-run's wall time minus the time in the client, per iteration. runner_ms stops
where the iteration event is written; the whole-run figure also has what follows it (the event
and run.json, closing a task: its summary asks git for the changed files) and what precedes it
(the task's start: git HEAD), and ctx-run's own start.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["continuous", "fresh-per-task", "fresh-per-iteration", "hybrid"]


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def run_mode(ctx_run, claude, mode, tasks, root, exit_ms, live=None):
    if live:
        h = live.Harness(root)  # a git repository with one commit
        h.start_server({"turns": [{"text": "Done.\nCTXKIT-TASK: DONE"}] * tasks})
        proj = h.proj
        env = h.env({"XDG_STATE_HOME": os.path.join(root, "state"), "CTXKIT_ROLLOVER_CLAUDE_BIN": h.claude_bin})
        extra = ["--model", live.model]
    else:
        home = os.path.join(root, "home")
        proj = os.path.join(root, "proj")
        os.makedirs(home)
        os.makedirs(proj)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
               "XDG_STATE_HOME": os.path.join(root, "state"), "CTXKIT_ROLLOVER_CLAUDE_BIN": claude,
               "CTXKIT_STANDIN_EXIT_MS": str(exit_ms)}
        extra = []
        subprocess.run(["git", "init", "-q", "-b", "main", proj], check=True)
    git = ["git", "-C", proj, "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    with open(os.path.join(proj, "PROMPT.md"), "w") as f:
        f.write("Work in small steps and keep the tests green.\n" * 20)
    with open(os.path.join(proj, "tasks.yaml"), "w") as f:
        for i in range(tasks):
            f.write(f"- id: t{i + 1}\n  title: Task number {i + 1}\n  description: Change file {i + 1} and test it.\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "start"], check=True)
    t0 = time.perf_counter()
    p = subprocess.run([ctx_run, "tasks.yaml", "--context-mode", mode, "--max-iterations", str(2 * tasks)] + extra, cwd=proj,
                       env=env, capture_output=True, text=True)
    wall_ms = (time.perf_counter() - t0) * 1000
    if live:
        h.stop_server()
    if p.returncode != 0:
        sys.exit(f"bench_run_overhead: {mode}: ctx-run exited {p.returncode}: {p.stderr[-800:]}")
    rep = json.loads(subprocess.run([ctx_run, "report", "--json"], cwd=proj, env=env, capture_output=True, text=True,
                                    check=True).stdout)
    with open(os.path.join(rep["folder"], "events.jsonl")) as f:
        iters = [e for e in map(json.loads, f) if e["event"] == "iteration"]
    client = [e["client_ms"] for e in iters]
    exits = [e["client_exit_ms"] for e in iters if e.get("client_exit_ms", -1) >= 0]
    return [e["runner_ms"] for e in iters], client, rep["totals"], (wall_ms - sum(client)) / len(iters), exits


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ctx-run", required=True)
    ap.add_argument("--claude", help="the stand-in client (claude_standin)")
    ap.add_argument("--live", action="store_true", help="the real client and the fake API of tests/live instead")
    ap.add_argument("--model", default="claude-sonnet-4-5", help="with --live")
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--exit-ms", type=int, default=40, help="the stand-in's time from its result to its exit, second round")
    a = ap.parse_args()
    if not a.live and not a.claude:
        ap.error("--claude or --live is required")
    ctx_run, claude = os.path.abspath(a.ctx_run), a.claude and os.path.abspath(a.claude)
    a.tasks = a.tasks or (10 if a.live else 50)
    live = None
    if a.live:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "live"))
        import harness as live  # noqa: E402 (found only now)
        live.model = a.model
        live.claude_bin()
    work = tempfile.mkdtemp(prefix="ctxkit-bench-run-")
    try:
        for exit_ms in ((None,) if live else (0, a.exit_ms)):
            client_name = f"Claude Code ({a.model}), fake API" if live else f"stand-in client exiting {exit_ms} ms after its result"
            print(f"ctx-run overhead per iteration: {a.tasks} tasks x 1 iteration per mode, {client_name}")
            print(f"{'mode':<22}{'iterations':>11}{'runner median':>15}{'runner p90':>12}{'report median':>15}{'client median':>15}{'whole run':>12}{'client exit':>15}")
            for mode in MODES:
                runner, client, totals, whole, exits = run_mode(ctx_run, claude, mode, a.tasks,
                                                                os.path.join(work, f"{mode}-{exit_ms}"), exit_ms, live)
                print(f"{mode:<22}{len(runner):>11}{statistics.median(runner):>12.1f} ms{percentile(runner, 90):>9.1f} ms"
                      f"{totals.get('runner_ms_median', float('nan')):>12.1f} ms{statistics.median(client):>12.1f} ms{whole:>9.1f} ms"
                      f"{statistics.median(exits) if exits else float('nan'):>12.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
