#!/usr/bin/env python3
"""Whole-process benchmark of ctx-workflow-mcp, beside Lanes's Node server when it is given.

Each server is driven the same way over stdio (newline-delimited JSON-RPC, as Claude Code does):
  start:  spawn -> initialize -> notifications/initialized -> tools/list answered (wall time)
  calls:  on a 200-task loop workflow, each tools/call's round trip (every workflow_advance
          writes the state file), medians per tool; measured with the client and the server on
          one CPU (the figures), and again on any CPU (printed beside them)
  RSS:    peak resident set (VmHWM) of the server process after the run

  bench_workflow_mcp.py --ours PATH/ctx-workflow-mcp [--lanes PATH/out/mcp/server.js]
                        [--runs N] [--tasks N]

The Lanes server is optional ($CTXKIT_LANES_SERVER is used when --lanes is not given); without it
the run says so and reports ours alone.

Why one CPU: on two, each round trip waits twice for the other CPU to wake up (the server spends
about half of its time being switched in), the same for both servers and varying from run to run
by more than a server's own work; on one, the round trip is the two processes' work and two
switches. Without a CPU to pin to (sched_setaffinity), every measure is on any CPU.

With Lanes, the ratios (ours / Lanes: lower is better) go to $CTXKIT_BENCH_FIGURES for
bench/figures.py, each with its noise: the spread (1.4826 x the median absolute deviation) of the
ratio of medians over 5 consecutive blocks of the calls (or starts).
"""
import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TEMPLATE = """name: bench
description: A loop over many tasks, for the benchmark.
loops:
  tasks:
    - id: implement
      instructions: "Implement {task.title}."
    - id: review
      instructions: "Review {task.title}."
      context: compact
steps:
  - id: plan
    type: action
    instructions: Plan the work.
  - id: tasks
    type: loop
  - id: finish
    type: action
    instructions: Wrap up.
"""


class Server:
    def __init__(self, argv, cwd, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=cwd, env=env, bufsize=0)
        # Requests go out unbuffered; answers are read through a buffer (readline on the raw
        # pipe would read one byte per system call and time the client instead of the server).
        self.out = io.BufferedReader(self.proc.stdout, 1 << 16)
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def request(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        self.send(msg)
        line = self.out.readline()
        if not line:
            raise RuntimeError(f"server closed its output during {method}")
        return json.loads(line)

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def initialize(server):
    server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "0"}})
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server.request("tools/list")


def argv_for(kind, path, worktree, template):
    common = ["--worktree", worktree, "--workflow-path", template, "--repo-root", worktree]
    if kind == "lanes":
        return ["node", path] + common
    return [path] + common


class OneCpu:
    """Runs its block (and the processes it starts) on one of the CPUs this process may use."""

    def __init__(self, pin):
        self.pin = pin and hasattr(os, "sched_setaffinity")
        self.before = None

    def __enter__(self):
        if self.pin:
            self.before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {min(self.before)})
        return self

    def __exit__(self, *exc):
        if self.before is not None:
            os.sched_setaffinity(0, self.before)


def measure(kind, path, runs, tasks):
    work = tempfile.mkdtemp(prefix=f"wf-bench-{kind}-")
    try:
        template = os.path.join(work, "bench.yaml")
        with open(template, "w") as f:
            f.write(TEMPLATE)
        env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=os.path.join(work, ".config"),
                   XDG_STATE_HOME=os.path.join(work, ".state"))
        env.pop("CLAUDE_PROJECT_DIR", None)
        starts = []
        for i in range(runs):
            wt = os.path.join(work, f"start{i}")
            os.makedirs(wt)
            t0 = time.perf_counter()
            s = Server(argv_for(kind, path, wt, template), wt, env)
            listed = initialize(s)
            starts.append((time.perf_counter() - t0) * 1000)
            assert len(listed["result"]["tools"]) >= 5, listed
            s.close()

        r = {"start_ms": starts}
        r.update(calls(kind, path, work, "calls", template, env, tasks, True))
        r["calls_any_cpu"] = calls(kind, path, work, "calls-any-cpu", template, env, tasks,
                                   False)["calls"]
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def calls(kind, path, work, name, template, env, tasks, pin):
    """One server through a whole workflow: each call's round trip, by tool."""
    wt = os.path.join(work, name)
    os.makedirs(wt)
    with OneCpu(pin):
        s = Server(argv_for(kind, path, wt, template), wt, env)
        initialize(s)
        times = {}

        def timed(tool, arguments):
            t0 = time.perf_counter()
            r = s.call(tool, arguments)
            times.setdefault(tool, []).append((time.perf_counter() - t0) * 1000)
            if r.get("result", {}).get("isError"):
                raise RuntimeError(f"{kind}: {tool} failed: {r}")
            return r

        timed("workflow_start", {"summary": "benchmark run"})
        timed("workflow_set_tasks", {"loop_id": "tasks",
                                     "tasks": [{"id": f"t{i}", "title": f"Task {i}"} for i in range(tasks)]})
        advances = 0
        while True:
            r = timed("workflow_advance", {"output": f"done {advances}"})
            advances += 1
            text = r["result"]["content"][0]["text"]
            if '"complete"' in text or advances > tasks * 4 + 10:
                break
            if advances % 4 == 0:
                timed("workflow_status", {})
        rss = s.rss_kb()
        state = os.path.join(wt, "workflow-state.json")
        state_kb = os.path.getsize(state) / 1024 if os.path.exists(state) else 0
        s.close()
        return {"calls": times, "rss_kb": rss, "advances": advances, "state_kb": state_kb}


def report(kind, r):
    med = statistics.median
    print(f"{kind}: spawn -> tools/list median {med(r['start_ms']):.2f} ms "
          f"(min {min(r['start_ms']):.2f}, max {max(r['start_ms']):.2f}, {len(r['start_ms'])} runs)")
    for name, ts in r["calls"].items():
        any_cpu = r["calls_any_cpu"][name]
        print(f"{kind}:   {name:20s} median {med(ts):.3f} ms  p90 {sorted(ts)[int(len(ts) * 0.9)]:.3f} ms  ({len(ts)} calls; "
              f"on any CPU {med(any_cpu):.3f} ms)")
    print(f"{kind}:   peak RSS {r['rss_kb'] / 1024:.1f} MB; {r['advances']} advances; state file {r['state_kb']:.0f} KB")


def block_noise(ours, lanes, blocks=5):
    """The spread of median(ours block) / median(lanes block) over consecutive blocks: 1.4826 x
    the median absolute deviation (robust to one disturbed block)."""
    po, pl = len(ours) // blocks, len(lanes) // blocks
    if po == 0 or pl == 0:
        return 0.0
    med = statistics.median
    r = [med(ours[b * po:(b + 1) * po]) / med(lanes[b * pl:(b + 1) * pl]) for b in range(blocks)]
    m = med(r)
    return 1.4826 * med([abs(x - m) for x in r])


def figure(name, value, noise, target):
    path = os.environ.get("CTXKIT_BENCH_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(f"{name}\t{value:.4f}\t{noise:.4f}\t{target}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--lanes", default=os.environ.get("CTXKIT_LANES_SERVER", ""))
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--tasks", type=int, default=200)
    a = ap.parse_args()
    ours = measure("ours", os.path.abspath(a.ours), a.runs, a.tasks)
    report("ctx-workflow-mcp", ours)
    if not a.lanes or not os.path.exists(a.lanes):
        print("lanes: skipped (build Lanes's MCP server and pass --lanes PATH/out/mcp/server.js "
              "or set CTXKIT_LANES_SERVER)")
        return 0
    if shutil.which("node") is None:
        print("lanes: skipped (node is not installed)")
        return 0
    lanes = measure("lanes", os.path.abspath(a.lanes), max(5, a.runs // 3), a.tasks)
    report("lanes-workflow", lanes)
    med = statistics.median
    print(f"ratio: start {med(lanes['start_ms']) / med(ours['start_ms']):.1f}x faster; "
          f"workflow_advance {med(lanes['calls']['workflow_advance']) / med(ours['calls']['workflow_advance']):.1f}x; "
          f"RSS {lanes['rss_kb'] / max(ours['rss_kb'], 1):.1f}x smaller")
    ok = True
    for tool, target in (("workflow_status", 1 / 3), ("workflow_advance", 1.0)):
        o, l = ours["calls"][tool], lanes["calls"][tool]
        value = med(o) / med(l)
        ok = ok and value <= target
        any_cpu = med(ours["calls_any_cpu"][tool]) / med(lanes["calls_any_cpu"][tool])
        print(f"ratio: {tool} ours / Lanes {value:.3f} (target <= {target:.3f}; on any CPU {any_cpu:.3f})")
        figure(f"workflow.{tool}_vs_lanes", value, block_noise(o, l), f"<={target:.3f}")
    start = med(ours["start_ms"]) / med(lanes["start_ms"])
    ok = ok and start <= 0.05
    figure("workflow.start_vs_lanes", start, block_noise(ours["start_ms"], lanes["start_ms"]), "<=0.050")
    figure("workflow.rss_mb", ours["rss_kb"] / 1024, 0, "<=10")
    ok = ok and ours["rss_kb"] <= 10 * 1024
    print(f"targets: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
