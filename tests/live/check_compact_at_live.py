#!/usr/bin/env python3
"""Live check of `[compact] at` under ctxkit's supervisor, in the real interactive Claude Code
(under tmux) against the fake API of this folder. Nobody types anything after the launch.

Usage: check_compact_at_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

The user's config.toml says `[compact] at = 50`; the project's settings register ctxkit's hooks
(ctx-session-hook on SessionStart and Stop, ctx-pin --hook on PreCompact, PostCompact and
UserPromptSubmit). In tmux: `ctx-rollover --supervise -- claude --model M ... "pin the facts"`.
The scripted model pins 5 facts with `ctx-pin add` (Bash), and the reply that ends its turn reports
60 % of the window the client gives the model. The fake API's summary keeps 3 of the pins.

Checks, from the fake API's request log and ctxkit's programs:
  - a compaction request is made on the same session by the headless client, and holds all 5
    pins (its focus, and the PreCompact hook's instructions);
  - the next request to the model comes from the interactive client again, on the same session,
    and holds the 2 pins the summary dropped, re-injected;
  - ctx-status says `pins 3/5 kept, 2 restored`.
"""
import json
import os
import shlex
import subprocess
import sys
import time

import live_common
from record_compaction import client_window
from fake_api import SUMMARY_PHRASES, flatten as text_of

PINS = ["ATPIN-ALPHA the API listens on port 8123", "ATPIN-BRAVO deploys happen on friday",
        "ATPIN-CHARLIE the staging cluster is east-2", "ATPIN-DELTA the release branch is rel-77",
        "ATPIN-ECHO owner of the schema is dana"]
KEPT, DROPPED = PINS[:3], PINS[3:]
SUMMARY = "<analysis>a</analysis><summary>AT-SUMMARY. Facts: " + "; ".join(KEPT) + ".</summary>"
RESUMED_REPLY = "Ready to go on after the compaction."


def session_of(q):
    return {k.lower(): v for k, v in (q.get("headers") or {}).items()}.get("x-claude-code-session-id")


def agent_of(q):
    ua = {k.lower(): v for k, v in (q.get("headers") or {}).items()}.get("user-agent", "")
    return "print" if "sdk-cli" in ua else "interactive" if "(external, cli)" in ua else ua


def write_settings(proj, bin_dir):
    hook = lambda prog, extra="": {"type": "command", "command": os.path.join(bin_dir, prog) + extra, "timeout": 30}
    settings = {"hooks": {
        "SessionStart": [{"hooks": [hook("ctx-session-hook")]}],
        "Stop": [{"hooks": [hook("ctx-session-hook")]}],
        "PreCompact": [{"hooks": [hook("ctx-session-hook")]}, {"hooks": [hook("ctx-pin", " --hook")]}],
        "PostCompact": [{"hooks": [hook("ctx-pin", " --hook")]}],
        "UserPromptSubmit": [{"hooks": [hook("ctx-pin", " --hook")]}]},
        # As an install sets it: the status line tells ctxkit the window the client gives the model
        # (against the fake API 2.1.197 gives claude-opus-4-8 200k, not the 1M of the real API),
        # and the trigger counts as the reminders do.
        "statusLine": {"type": "command", "command": os.path.join(bin_dir, "ctx-status")}}
    path = os.path.join(proj, ".claude", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(settings, f, indent=1)


def run_model(Harness, bin_dir, base, model):
    h = Harness(base)
    write_settings(h.proj, bin_dir)
    h.write_interactive_config()
    config = os.path.join(h.root, "config")
    os.makedirs(os.path.join(config, "ctxkit"))
    with open(os.path.join(config, "ctxkit", "config.toml"), "w") as f:
        f.write("[compact]\nat = 50\n")
    turns = [{"tool": "Bash", "input": {"command": f"{bin_dir}/ctx-pin add '{p}'", "description": "pin"},
              "id": f"toolu_at{i}"} for i, p in enumerate(PINS)]
    turns.append({"text": "Pinned the five facts.", "fill_pct": 60})
    turns.append({"text": RESUMED_REPLY})
    # 60 % of the window this client gives the model (claude-opus-4-8: 1M on 2.1.332, where it
    # compacts at 967k; 200k on 2.1.197): past `at`, short of the client's own compaction.
    window = client_window(h.root, model)
    h.start_server({"context_window": window, "turns": turns, "compact_text": SUMMARY})
    state = os.path.join(h.root, "state")
    env = h.env({"TERM": "xterm-256color", "XDG_STATE_HOME": state, "XDG_CONFIG_HOME": config,
                 "PATH": bin_dir + ":/usr/local/bin:/usr/bin:/bin"})
    envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
    sup_err = os.path.join(h.root, "supervisor.err")
    argv = [os.path.join(bin_dir, "ctx-rollover"), "--supervise", "--", h.claude_bin, "--model", model,
            "--dangerously-skip-permissions", "pin the facts"]
    cmd = "cd %s && env -i %s %s 2>%s; echo SUPERVISOR-EXIT $?; sleep 600" % (
        shlex.quote(h.proj), envs, " ".join(shlex.quote(a) for a in argv), shlex.quote(sup_err))
    sess = "ctxkit-atlive-%d" % os.getpid()
    subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45", cmd], check=True)
    screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", sess], capture_output=True, text=True).stdout
    pane = ""
    try:
        for _ in range(180):
            time.sleep(1)
            pane = screen()
            if RESUMED_REPLY in pane or "SUPERVISOR-EXIT" in pane:
                break
        time.sleep(2)
        pane = screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
        h.stop_server()
    sup_text = open(sup_err, errors="replace").read() if os.path.exists(sup_err) else ""
    results = []

    def check(cond, what, detail=""):
        results.append((bool(cond), what, "" if cond else detail))

    msgs = [q for q in h.requests() if q.get("kind") in ("main", "compact")]
    mains = [q for q in msgs if q["kind"] == "main"]
    first = session_of(mains[0]) if mains else None
    compacts = [i for i, q in enumerate(msgs) if q["kind"] == "compact"]
    c = msgs[compacts[0]] if compacts else None
    c_users = [text_of(m.get("content")) for m in c["body"]["messages"] if m.get("role") == "user"] if c else []
    asks = next((i for i, t in enumerate(c_users) if any(p in t for p in SUMMARY_PHRASES)), len(c_users))
    ctext = "\n".join(c_users[asks:])
    check(c and session_of(c) == first and agent_of(c) == "print",
          "a compaction on the same session by the headless client, with nobody typing",
          f"requests: {[(q['kind'], agent_of(q)) for q in msgs]}; supervisor: {sup_text[-600:]}; pane: {pane[-600:]}")
    at = ctext.find("Additional Instructions")
    check(at >= 0 and all(p in ctext[at:] for p in PINS),
          "the summarization request holds all 5 pins under Additional Instructions", f"tail: {ctext[-1200:]!r}")
    after = [q for q in msgs[compacts[0] + 1:] if q["kind"] == "main"] if compacts else []
    r = after[0] if after else None
    rtext = json.dumps(r["body"]["messages"]) if r else ""
    check(r and session_of(r) == first and agent_of(r) == "interactive",
          "the next request is the interactive client's, on the same session",
          f"next: {(session_of(r), agent_of(r)) if r else None}")
    check(all(p in rtext for p in DROPPED) and "left out" in rtext,
          "the next request holds the 2 pins the summary dropped, re-injected", f"tail: {rtext[-1500:]}")
    status_in = {"session_id": first, "transcript_path": h.transcript_path(first) if first else "",
                 "cwd": h.proj, "model": {"id": model, "display_name": model},
                 "context_window": {"context_window_size": 200000,
                                    "current_usage": {"input_tokens": 5000, "cache_creation_input_tokens": 0,
                                                      "cache_read_input_tokens": 0}}}
    st = subprocess.run([os.path.join(bin_dir, "ctx-status"), "--no-color"], input=json.dumps(status_in),
                        capture_output=True, text=True, env=env, cwd=h.proj)
    check("pins 3/5 kept, 2 restored" in st.stdout, f"ctx-status: {st.stdout.strip()}", st.stderr.strip())
    return results


def main():
    a = live_common.parse_args(__doc__, ["ctx-rollover", "ctx-session-hook", "ctx-pin", "ctx-status"])
    if subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True).returncode != 0:
        sys.exit("check_compact_at_live: tmux not found")
    return live_common.run_models(a, run_model, "compact-at", "ctxkit-compact-at-live-")


if __name__ == "__main__":
    sys.exit(main())
