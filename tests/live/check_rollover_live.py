#!/usr/bin/env python3
"""Live check of ctx-rollover, ctx-lineage and ctx-search against the real Claude Code CLI and the
fake API of this folder.

Usage: check_rollover_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

A real session runs a tool whose output holds a unique marker. ctx-rollover (outside Claude Code,
headless) archives it and starts the real client as the new session. Checks: the new session's
first request to the model carries the continuation header and the handoff summary, ctx-lineage
shows parent -> child, and ctx-search finds the marker that existed only in the old session's
tool output.
"""
import json
import os
import subprocess
import sys
import tempfile
import uuid

import live_common


def check_supervised(a, Harness, root, model):
    """The agent itself runs ctx-rollover through the Bash tool inside a supervised session; the
    real Stop hook ends the turn; the supervisor starts the new session with the handoff."""
    h = Harness(root)
    bin_dir = os.path.abspath(a.bin_dir)
    h.write_settings(events=["SessionStart", "Stop", "SessionEnd"], hook_command=os.path.join(bin_dir, "ctx-session-hook") + " {event}",
                     record=False)
    phrase = "supervised-handoff-" + uuid.uuid4().hex[:6]
    summary = os.path.join(h.root, "summary.md")
    with open(summary, "w") as f:
        f.write(f"### Current Task\nCarry on: {phrase}.\n\n### Immediate Next Steps\n1. Check the build.\n")
    script = {"context_window": 200000, "turns": [
        {"text": "Rolling over.", "tool": "Bash",
         "input": {"command": f"{bin_dir}/ctx-rollover --summary-file {summary}", "description": "rollover"}, "fill_pct": 80},
        {"text": "Handed over; ending this turn.", "fill_pct": 81},
        {"text": "Continuing from the handoff.", "fill_pct": 10}]}
    h.start_server(script)
    try:
        env = h.env({"XDG_STATE_HOME": os.path.join(h.root, "state")})
        cmd = [os.path.join(bin_dir, "ctx-rollover"), "--supervise", "--", h.claude_bin, "-p", "--dangerously-skip-permissions",
               "--model", model, "--output-format", "json", "please roll over"]
        p = subprocess.run(cmd, cwd=h.proj, env=env, capture_output=True, text=True, timeout=300)
        reqs = h.requests(kind="main")
        firsts = [q for q in reqs if q["body"]["messages"] and "## Session Continuation" in json.dumps(q["body"]["messages"][0])]
        if p.returncode == 0 and firsts and phrase in json.dumps(firsts[0]["body"]["messages"]):
            print(f"ok   {model}: supervised: the agent's ctx-rollover + the real Stop hook started the new session with the handoff")
            return True
        print(f"FAIL {model}: supervised rc={p.returncode} stderr={p.stderr[-400:]} requests={len(reqs)}")
        return False
    finally:
        h.stop_server()


def main():
    a = live_common.parse_args(__doc__, ["ctx-rollover", "ctx-lineage", "ctx-search", "ctx-session-hook"])
    from harness import Harness  # noqa: E402 (the harness parse_args chose)

    work = a.work or tempfile.mkdtemp(prefix="ctxkit-rollover-live-")
    ok = True
    for model in a.models:
        h = Harness(os.path.join(work, model))
        hook = os.path.join(os.path.abspath(a.bin_dir), "ctx-session-hook")
        h.write_settings(events=["SessionStart", "SessionEnd"], hook_command=hook + " {event}", record=False)
        marker = "MARKER-" + uuid.uuid4().hex[:12]
        phrase = "rewire-the-flux-capacitor-" + uuid.uuid4().hex[:6]
        script = {"context_window": 200000, "turns": [
            {"text": "Checking.", "tool": "Bash", "input": {"command": f"echo {marker}", "description": "marker"}, "fill_pct": 70},
            {"text": "Noted.", "fill_pct": 71},
            {"text": "Continuing from the handoff.", "fill_pct": 10}]}
        h.start_server(script)
        try:
            r = h.claude("print the marker", args=["--model", model])
            if r.rc != 0 or not r.session_id:
                print(f"FAIL {model}: first run rc={r.rc} {r.stderr[-300:]}")
                ok = False
                continue
            sid = r.session_id
            summary = os.path.join(h.root, "summary.md")
            with open(summary, "w") as f:
                f.write(f"### Current Task\nFinish the job: {phrase}.\n\n### Immediate Next Steps\n1. Run the tests.\n")
            env = h.env({"XDG_STATE_HOME": os.path.join(h.root, "state"),
                         "CTXKIT_ROLLOVER_CLAUDE_ARGS": f"--dangerously-skip-permissions,--model,{model},--output-format,json"})
            mark = h.mark()
            p = subprocess.run([os.path.join(a.bin_dir, "ctx-rollover"), "--summary-file", summary, "--session", sid,
                                "--print", "--claude-bin", h.claude_bin], cwd=h.proj, env=env, capture_output=True,
                               text=True, timeout=300)
            if p.returncode != 0:
                print(f"FAIL {model}: ctx-rollover rc={p.returncode}: {p.stderr.strip()[-300:]}")
                ok = False
                continue
            new_id = json.loads(p.stdout).get("session_id")
            reqs = [q for q in h.requests(kind="main", since=mark)]
            if not reqs:
                print(f"FAIL {model}: the new session sent no request")
                ok = False
                continue
            first = json.dumps(reqs[0]["body"]["messages"])
            if "## Session Continuation" in first and phrase in first:
                print(f"ok   {model}: the new session {new_id}'s first request carries the continuation header and the summary")
            else:
                print(f"FAIL {model}: the first request lacks the continuation or the summary: {first[:300]}")
                ok = False
            lin = subprocess.run([os.path.join(a.bin_dir, "ctx-lineage"), new_id, "--json"], env=env, capture_output=True, text=True)
            chain = json.loads(lin.stdout) if lin.returncode == 0 else []
            if len(chain) >= 2 and chain[-2]["session_id"] == sid and chain[-1]["session_id"] == new_id and chain[-2]["end_reason"] == "rollover":
                print(f"ok   {model}: ctx-lineage shows {sid} -> {new_id} (rollover at {chain[-2]['context_at_end']}%)")
            else:
                print(f"FAIL {model}: ctx-lineage: {lin.stdout[:300]} {lin.stderr[:200]}")
                ok = False
            s = subprocess.run([os.path.join(a.bin_dir, "ctx-search"), marker, "--json"], env=env, capture_output=True, text=True)
            hits = json.loads(s.stdout) if s.returncode == 0 and s.stdout.startswith("[") else []
            if any(x["session_id"] == sid and x["role"] == "tool_result" for x in hits):
                print(f"ok   {model}: ctx-search finds {marker}, which only the old session's tool output held")
            else:
                print(f"FAIL {model}: ctx-search: {s.stdout[:300]} {s.stderr[:200]}")
                ok = False
        finally:
            h.stop_server()
        ok = check_supervised(a, Harness, os.path.join(work, model + "-supervised"), model) and ok
    print("rollover live check passed" if ok else "rollover live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
