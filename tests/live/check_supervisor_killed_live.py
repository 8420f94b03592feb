#!/usr/bin/env python3
"""Live check of a supervisor killed (kill -9) between the end of a turn and the compaction that
`[compact] at` asked it for, in the real interactive Claude Code (under tmux) against the fake API
of this folder.

Usage: check_supervisor_killed_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]

The user's config.toml says `[compact] at = 50`; the project registers ctxkit's hooks as
check_compact_at_live.py does. In tmux: `ctx-rollover --supervise -- claude … "pin the facts"`.
The supervisor is stopped (SIGSTOP) once the client runs, so that it cannot act; the scripted model
pins 2 facts and ends its turn at 60 % of the window; once the Stop hook has handed it the
compaction, the supervisor is killed (SIGKILL). Checks:
  - the client ends with it (hung up), and the shell gets the terminal back;
  - nothing is lost: the session's transcript holds the turn, both pins are listed;
  - a new supervisor on the same session (`claude --resume S "go on"`) says once, on stderr, what
    the dead one left undone; the session goes on, and its next turn past the threshold is
    compacted by the headless client with both pins in the summarization request.
"""
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time

import live_common
from record_compaction import client_window
from check_compact_at_live import write_settings, session_of, agent_of
from fake_api import flatten as text_of

PINS = ["KILLPIN-ONE the API listens on port 8123", "KILLPIN-TWO deploys happen on friday"]
SUMMARY = "<analysis>a</analysis><summary>KILL-SUMMARY. " + "; ".join(PINS) + ".</summary>"
TURN_END = "Pinned the two facts."
WENT_ON = "Went on with the work."
RESUMED_REPLY = "Ready to go on after the compaction."
LEFT_UNDONE = "a supervisor that is gone left /compact of session"


def pids_of(command_start):
    """The processes whose command line starts with `command_start`."""
    pattern = "^" + "".join("\\" + ch if ch in ".[]()*+?{}|^$\\" else ch for ch in command_start)
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def wait_for(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    return cond()


def run_model(Harness, bin_dir, base, model):
    h = Harness(base)
    write_settings(h.proj, bin_dir)
    h.write_interactive_config()
    config = os.path.join(h.root, "config")
    os.makedirs(os.path.join(config, "ctxkit"))
    with open(os.path.join(config, "ctxkit", "config.toml"), "w") as f:
        f.write("[compact]\nat = 50\n")
    turns = [{"tool": "Bash", "input": {"command": f"{bin_dir}/ctx-pin add '{p}'", "description": "pin"},
              "id": f"toolu_kill{i}"} for i, p in enumerate(PINS)]
    turns.append({"text": TURN_END, "fill_pct": 60})
    turns.append({"text": WENT_ON, "fill_pct": 62})
    turns.append({"text": RESUMED_REPLY})
    window = client_window(h.root, model)
    h.start_server({"context_window": window, "turns": turns, "compact_text": SUMMARY})
    state = os.path.join(h.root, "state")
    env = h.env({"TERM": "xterm-256color", "XDG_STATE_HOME": state, "XDG_CONFIG_HOME": config,
                 "PATH": bin_dir + ":/usr/local/bin:/usr/bin:/bin"})
    envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
    results = []

    def check(cond, what, detail=""):
        results.append((bool(cond), what, "" if cond else detail))

    def supervised(args, err_file, tag):
        argv = [os.path.join(bin_dir, "ctx-rollover"), "--supervise", "--", h.claude_bin, "--model", model,
                "--dangerously-skip-permissions"] + args
        # The status goes to a file: the client's last output (it leaves its alternate screen when it
        # is hung up) may come after the shell's echo and hide it.
        status_file = os.path.join(h.root, tag + ".status")
        return "cd %s && env -i %s %s 2>%s; echo $? > %s" % (
            shlex.quote(h.proj), envs, " ".join(shlex.quote(a) for a in argv), shlex.quote(err_file),
            shlex.quote(status_file))

    sess = "ctxkit-killlive-%d" % os.getpid()
    err1, err2 = os.path.join(h.root, "supervisor1.err"), os.path.join(h.root, "supervisor2.err")
    screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", sess], capture_output=True, text=True).stdout
    db = os.path.join(state, "ctxkit", "state.db")

    def compact_ready():
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
                return c.execute("SELECT count(*) FROM pending_rollovers WHERE ready=1 AND action='compact'"
                                 ).fetchone()[0] > 0
        except sqlite3.Error:
            return False

    subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45",
                    "sh -c " + shlex.quote(supervised(["pin the facts"], err1, "FIRST") + "; sleep 600")],
                   check=True)
    pane = ""
    try:
        # The supervisor, stopped as soon as it runs the client: it cannot carry anything out.
        sup = wait_for(lambda: pids_of(os.path.join(bin_dir, "ctx-rollover") + " --supervise"), 30)
        client = wait_for(lambda: pids_of(h.claude_bin + " --model " + model), 30)
        check(sup and client, "the supervisor and its client run", f"supervisor {sup}, client {client}")
        if not (sup and client):
            return results
        os.kill(sup[0], signal.SIGSTOP)
        ready = wait_for(compact_ready, 120)
        check(ready, "the turn ended past [compact] at and the compaction was handed to the supervisor",
              f"pane: {screen()[-600:]}")
        os.kill(sup[0], signal.SIGKILL)
        gone = wait_for(lambda: not pids_of(h.claude_bin + " --model " + model), 20)
        status_file = os.path.join(h.root, "FIRST.status")
        status = wait_for(lambda: open(status_file).read().strip() if os.path.exists(status_file) else "", 20)
        check(gone, "the client ended with its supervisor (hung up)",
              f"still running: {pids_of(h.claude_bin + ' --model ' + model)}")
        check(status == "137", "the shell went on (the supervisor's status 137)",
              f"status {status!r}; pane: {screen()[-400:]}")
        mains = h.requests("main")
        sid = session_of(mains[0]) if mains else None
        lines = open(h.transcript_path(sid), errors="replace").read() if sid and h.transcript_path(sid) else ""
        check(TURN_END in lines and all(p in lines for p in PINS),
              "nothing lost: the transcript holds the turn and the pins' calls", f"session {sid}")
        listed = subprocess.run([os.path.join(bin_dir, "ctx-pin"), "list"], capture_output=True, text=True,
                                env=dict(env, CLAUDE_CODE_SESSION_ID=sid or ""), cwd=h.proj)
        check(all(p in listed.stdout for p in PINS), "nothing lost: ctx-pin list shows both pins",
              listed.stdout + listed.stderr)
        check(not any(q.get("kind") == "compact" for q in h.requests()), "no compaction ran before the kill")

        # The session goes on under a new supervisor.
        subprocess.run(["tmux", "send-keys", "-t", sess, "C-c", ""], capture_output=True)
        subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
        subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45",
                        "sh -c " + shlex.quote(supervised(["--resume", sid or "none", "go on"], err2,
                                                          "SECOND") + "; sleep 600")], check=True)
        pane = wait_for(lambda: (lambda p: p if RESUMED_REPLY in p else "")(screen()), 180) or screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
        h.stop_server()
    err_text = open(err2, errors="replace").read() if os.path.exists(err2) else ""
    check(err_text.count(LEFT_UNDONE) == 1, "the new supervisor says once what the dead one left undone",
          f"stderr: {err_text[-600:]!r}")
    msgs = [q for q in h.requests() if q.get("kind") in ("main", "compact")]
    compacts = [q for q in msgs if q["kind"] == "compact"]
    c = compacts[0] if compacts else None
    ctext = "\n".join(text_of(m.get("content")) for m in c["body"]["messages"] if m.get("role") == "user") if c else ""
    at = ctext.find("Additional Instructions")
    check(c and agent_of(c) == "print" and at >= 0 and all(p in ctext[at:] for p in PINS),
          "the session went on and its next turn past the threshold was compacted with both pins",
          f"requests: {[(q['kind'], agent_of(q)) for q in msgs]}; pane: {pane[-600:]}")
    check(RESUMED_REPLY in pane, "the session resumed after the compaction", f"pane: {pane[-600:]}")
    return results


def main():
    a = live_common.parse_args(__doc__, ["ctx-rollover", "ctx-session-hook", "ctx-pin", "ctx-status"])
    if subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True).returncode != 0:
        sys.exit("check_supervisor_killed_live: tmux not found")
    return live_common.run_models(a, run_model, "supervisor-killed", "ctxkit-killed-live-")


if __name__ == "__main__":
    sys.exit(main())
