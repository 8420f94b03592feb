#!/usr/bin/env python3
"""Live check of ctx-remind against the real Claude Code CLI and the fake API of this folder.

Usage: check_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

BIN_DIR holds the built ctx-remind. Checks, for the model given (default: both claude-sonnet-4-5 and claude-opus-4-8):
  1. thresholds: each reminder (60/75/85% of the usable window) is in the request right after
     the tool call that crossed it, not earlier, not one call late, and not repeated within the
     interval;
  2. subagent: the hook fired inside a subagent never hands the main session's figure to the
     subagent's model; the subagent gets its own figure.
Exit 0 when every check passes.
"""
import json
import os
import subprocess
import sys
import tempfile

import live_common

HERE = os.path.dirname(os.path.abspath(__file__))


def run(a, root, script, hook, model):
    # The client compacts at 167k of its 200k window (CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000, which
    # the hook reads from the environment it inherits), so the reminders count against 167k usable.
    cmd = live_common.cc_run_argv(a) + ["--root", root, "--script", script,
           "--prompt", "do the thing", "--model", model, "--hook-cmd", hook + " {event}",
           "--events", "PostToolUse", "--env", "CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    report = json.loads(p.stdout)
    if report["rc"] != 0:
        raise SystemExit(f"claude failed: {report.get('stderr_tail')}")
    reqs = [json.loads(l) for l in open(report["requests_log"])]
    return report, [q for q in reqs if q.get("kind") == "main"]


def texts(req):
    out = []
    for m in req["body"].get("messages", []):
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for b in blocks:
            out.append(json.dumps(b))
    return "\n".join(out)


def last_user_message(req):
    """Everything the request adds after the model's last turn (the tool result, the hook
    context, and any system messages the client appends)."""
    msgs = req["body"].get("messages", [])
    tail = []
    for m in reversed(msgs):
        if m["role"] == "assistant":
            break
        tail.append(m)
    return json.dumps(list(reversed(tail)))


def check_thresholds(a, work, hook, model):
    _, reqs = run(a, os.path.join(work, "thresholds-" + model), os.path.join(HERE, "scripts/thresholds.json"), hook, model)
    # request k carries the result of tool call k (1-based); the crossing calls are 2, 4, 5.
    want = {2: "Context at 61%", 4: "Context at 75%", 5: "Context at 86%"}
    ok = True
    for k in range(1, len(reqs)):
        new_part = last_user_message(reqs[k])
        found = [w for w in ["Context at"] if w in new_part]
        if k in want:
            if want[k] not in new_part:
                print(f"FAIL {model}: request {k + 1} lacks '{want[k]}'")
                ok = False
            else:
                print(f"ok   {model}: '{want[k]}' reached the model in request {k + 1}, right after tool call {k}")
        elif found:
            print(f"FAIL {model}: unexpected reminder in request {k + 1}: {new_part[:300]}")
            ok = False
    for k in sorted(want):
        if k >= len(reqs):
            print(f"FAIL {model}: the client made {len(reqs)} requests: request {k + 1} ('{want[k]}') never came")
            ok = False
    return ok


def check_subagent(a, work, hook, model):
    report, reqs = run(a, os.path.join(work, "subagent-" + model), os.path.join(HERE, "scripts/subagent.json"), hook, model)
    ok = True
    sub = [q for q in reqs if q.get("thread") == "subagent"]
    main = [q for q in reqs if q.get("thread") != "subagent"]
    if len(sub) < 3:
        print(f"FAIL {model}: expected 3 subagent requests, saw {len(sub)}")
        return False
    # The main session is at 80% of the window (95% usable); the subagent at 20% then 70%.
    for q in sub:
        if "Context at 95%" in texts(q) or "Context at 96%" in texts(q):
            print(f"FAIL {model}: the main session's figure reached the subagent")
            ok = False
    if "Context at" in last_user_message(sub[1]):
        print(f"FAIL {model}: a reminder reached the subagent at 23%")
        ok = False
    if "Context at 83% (140k of 167k usable tokens) in this subagent" not in last_user_message(sub[2]):
        print(f"FAIL {model}: the subagent's own 83% reminder is missing: {last_user_message(sub[2])[:400]}")
        ok = False
    else:
        print(f"ok   {model}: the subagent got its own figure (83%) and never the main session's")
    if not any("Context at 95%" in last_user_message(q) for q in main):
        print(f"FAIL {model}: the main session's reminder after the Agent call is missing")
        ok = False
    else:
        print(f"ok   {model}: the main session got its own figure (95%) after the Agent call")
    return ok


def main():
    a = live_common.parse_args(__doc__, ["ctx-remind"])
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-live-")
    hook = os.path.join(a.bin_dir, "ctx-remind")
    ok = True
    for model in a.models:
        ok = check_thresholds(a, work, hook, model) and ok
        ok = check_subagent(a, work, hook, model) and ok
    print("live check passed" if ok else "live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
