#!/usr/bin/env python3
"""Live check: without a supervisor, the reminder at `[compact] at` names the command and the pins.

Usage: check_compact_due_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

A fact is pinned to the project (`ctx-pin add --project`), `[compact] at = 40` is set in the user's
environment, and `claude -p` (no supervisor) runs one turn of Bash calls against the fake API whose
replies report usage at rising shares of the window, with ctx-remind as the PostToolUse hook. What
the model receives is asserted in the requests the API got:
  - below 40 % (and below the warn tier) no reminder;
  - from the first call at or past 40 % (still below the 60 % warn tier), a reminder that says the
    percent, `[compact] at = 40%`, that the user should type /compact, and the pinned fact word for
    word;
  - no second such reminder within the check interval (the rate limit of the tiers).
The models (--model) default to claude-sonnet-4-5 (reactive: its figure is of the whole window).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import live_common

FILLS = [20, 30, 42, 45, 48]
MODELS = ["claude-sonnet-4-5"]
PIN = "LIVEPIN-ZULU the billing service listens on port 7311"


def main():
    a = live_common.parse_args(__doc__, ["ctx-remind", "ctx-pin"])
    from harness import Harness, claude_bin  # noqa: E402 (the harness parse_args chose)

    version = subprocess.run([claude_bin(), "--version"], capture_output=True, text=True).stdout.split(" ")[0]
    models = a.model or MODELS
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-compact-due-live-")
    ok = True
    for model in models:
        h = Harness(os.path.join(work, model))
        state = os.path.join(h.root, "state")
        env = {"XDG_STATE_HOME": state, "CTXKIT_COMPACT_AT": "40"}
        pinned = subprocess.run([os.path.join(a.bin_dir, "ctx-pin"), "add", "--project", PIN],
                                env=dict(h.env(env), CLAUDE_PROJECT_DIR=h.proj), cwd=h.proj,
                                capture_output=True, text=True)
        if pinned.returncode != 0:
            print(f"FAIL {model}: ctx-pin add: {pinned.stderr.strip()}")
            ok = False
            continue
        h.write_settings(events=["PostToolUse"], hook_command=os.path.join(a.bin_dir, "ctx-remind") + " {event}",
                         record=False)
        turns = [{"tool": "Bash", "input": {"command": "echo step%d" % i}, "fill_pct": f}
                 for i, f in enumerate(FILLS)]
        turns.append({"text": "Done.", "fill_pct": FILLS[-1]})
        h.start_server({"turns": turns, "context_window": 200000})
        try:
            h.claude("go", args=["--model", model], env=env)
        finally:
            h.stop_server()
        mains = h.requests("main")
        # Each request's newest tool result: what the hook added after the call before it.
        said = []
        for q in mains:
            body = json.dumps(q.get("body") or {})
            found = re.findall(r"Context at (\d+)% \([^)]*\), past the point the user set for a compaction", body)
            said.append(sorted({int(p) for p in found}))
        where = f"{model} on {version}"
        last = json.dumps(mains[-1].get("body") or {}) if mains else ""
        due = [p for s in said for p in s]
        if not due:
            print(f"FAIL {where}: no [compact] at reminder reached the model (requests: {len(mains)})")
            ok = False
            continue
        first = min(due)
        problems = []
        if first < 40 or first >= 60:
            problems.append(f"the first one said {first}%, not 40 to 59")
        if "[compact] at = 40%" not in last or "type /compact now" not in last:
            problems.append("it does not name [compact] at = 40% and /compact")
        if PIN not in last:
            problems.append("the pinned fact is not in it")
        if len(set(due)) != 1:
            problems.append(f"it came more than once within the interval: {sorted(set(due))}%")
        if problems:
            print(f"FAIL {where}: " + "; ".join(problems))
            ok = False
        else:
            print(f"ok   {where}: at {first}% (below the warn tier) the model was told to ask for /compact, "
                  f"with the pin; once")
    print("compact-due live check passed" if ok else "compact-due live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
