#!/usr/bin/env python3
"""Live check of ctx-status in the real interactive Claude Code (under tmux), against the fake API
of this folder. The status line only runs in interactive mode.

Usage: check_status_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

Checks: the status line shows ctx-status's figure for the client's own context figure, whatever
the client's release says it is: the tokens and the window of the status-line input the client
gave (the recorder, wrapped by ctx-status, logs that input: 2.1.332 gives claude-opus-4-8 a
1,000,000-token window where 2.1.197 gave 200,000), and ctx-status recorded that exact figure in
the state database for ctx-remind.
"""
import json
import os
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time

import live_common




def client_figure(payload):
    """(tokens, window) of a status-line input, or None before the first response."""
    cw = payload.get("context_window") or {}
    cu = cw.get("current_usage")
    if not isinstance(cu, dict):
        return None
    tokens = sum(int(cu.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return tokens, int(cw.get("context_window_size") or 0)


def main():
    a = live_common.parse_args(__doc__, ["ctx-status", "ctx-remind"])
    from harness import Harness  # noqa: E402 (the harness parse_args chose)

    work = a.work or tempfile.mkdtemp(prefix="ctxkit-status-live-")
    bin_dir = a.bin_dir
    ok = True
    for model in a.models:
        h = Harness(os.path.join(work, model))
        # ctx-status wraps the recorder, which logs the very input the client gave.
        status_cmd = "%s --wrap %s" % (os.path.join(bin_dir, "ctx-status"), shlex.quote(h.recorder("StatusLine")))
        h.write_settings(events=["PostToolUse"], hook_command=os.path.join(bin_dir, "ctx-remind") + " {event}", record=False,
                         extra={"statusLine": {"type": "command", "command": status_cmd}})
        h.start_server({"context_window": 200000, "turns": [
            {"text": "Running.", "tool": "Bash", "input": {"command": "echo hi", "description": "say hi"}, "fill_pct": 60},
            {"text": "Done interactive.", "fill_pct": 75}]})
        key = h.env()["ANTHROPIC_API_KEY"]
        with open(os.path.join(h.home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
                       "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
                       "bypassPermissionsModeAccepted": True,
                       "projects": {h.proj: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                                             "allowedTools": []}}}, f)
        state = os.path.join(h.root, "state")
        # The client compacts at 167k of its 200k window: the status line's usable part ends there.
        env = h.env({"TERM": "xterm-256color", "XDG_STATE_HOME": state, "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"})
        envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
        sess = "ctxkit-status-%d" % os.getpid()
        cmd = "cd %s && env -i %s %s --dangerously-skip-permissions --model %s" % (
            shlex.quote(h.proj), envs, shlex.quote(h.claude_bin), shlex.quote(model))
        subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45", cmd], check=True)

        def screen():
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", sess], capture_output=True, text=True).stdout
        try:
            time.sleep(6)
            before = screen()
            subprocess.run(["tmux", "send-keys", "-t", sess, "do the thing"])
            time.sleep(1)
            subprocess.run(["tmux", "send-keys", "-t", sess, "Enter"])
            after, figure = "", None
            for _ in range(60):
                time.sleep(1)
                after = screen()
                figures = [f for f in (client_figure(x.get("stdin") or {}) for x in h.hooks("StatusLine")) if f]
                figure = figures[-1] if figures else None
                # The last response's usage (75 % of the scripted 200,000) shown on the screen.
                if figure and figure[0] == 150000 and (live_common.short_tokens(figure[0]) + " of ") in after:
                    break
            subprocess.run(["tmux", "send-keys", "-t", sess, "/exit", "Enter"])
            time.sleep(2)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
            h.stop_server()
        line = next((l.strip() for l in after.splitlines()
                     if "Context " in l and ("until auto-compact" in l or "of window" in l)), "")
        if "Context –" in before:
            print(f"ok   {model}: before the first response the status line shows 'Context –'")
        else:
            print(f"FAIL {model}: no placeholder before the first response:\n{before[-600:]}")
            ok = False
        want = figure and "%s of " % live_common.short_tokens(figure[0])
        # With an auto-compact window of 200,000 the client compacts at 167,000 of any model's
        # window: the status line counts against that point, in the client's words.
        want_window = figure and "of 167k · " in line and "% until auto-compact" in line
        if figure and line.startswith("Context ") and want in line and want_window:
            print(f"ok   {model}: the status line shows the client's figure ({figure[0]} of a {figure[1]} window): {line}")
        else:
            print(f"FAIL {model}: status line not the client's figure {figure}:\n{after[-900:]}")
            ok = False
        db = os.path.join(state, "ctxkit", "meter.db")
        rows = sqlite3.connect(db).execute("SELECT status_tokens, status_window FROM meter WHERE agent_id = '' AND status_tokens IS NOT NULL").fetchall() if os.path.exists(db) else []
        if figure and rows and tuple(rows[-1]) == tuple(figure):
            print(f"ok   {model}: ctx-status recorded the client's exact figure ({figure[0]} of {figure[1]}) for ctx-remind")
        else:
            print(f"FAIL {model}: recorded status figures: {rows}, the client's: {figure}")
            ok = False
    print("status live check passed" if ok else "status live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
