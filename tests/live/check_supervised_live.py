#!/usr/bin/env python3
"""Live check of a workflow's `compact` step carried out by ctxkit's supervisor in the real
interactive Claude Code (under tmux), against the fake API of this folder. Nobody types anything
after the launch.

Usage: check_supervised_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

The project has .ctxkit/workflows/ship.yaml: step `plan`, then step `review` with `context:
compact` and a `compact_focus`; ctx-workflow-mcp comes from an MCP config, and the project's
settings register ctxkit's hooks (ctx-session-hook on SessionStart and Stop, ctx-gate --hook on
SessionStart for clear|compact). In tmux: `ctx-rollover --supervise -- claude --model M ... "start"`.
The scripted model calls workflow_start, then workflow_advance (which answers that the supervisor
runs /compact when the turn ends), then ends its turn.

Checks, from the fake API's request log, the pane and the workflow state:
  - the workflow_advance answer the model got says the supervisor runs `/compact` at the turn's end;
  - a compaction request is made on the same session, with the step's focus as the summarizer's
    "Additional Instructions", by the headless client (`-p`);
  - the next request to the model comes from the interactive client again, on the same session,
    and carries the re-anchor (`Workflow "ship" is in progress`, the review step's instructions);
  - the pane shows the resumed session's answer, with the supervisor still running;
  - the state's events: the compact handed out by workflow_advance, confirmed by ctx-gate's
    SessionStart hook in the headless /compact, executed by the supervisor; `ctx-workflow status`
    shows it executed by the supervisor.
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
from fake_api import SUMMARY_PHRASES, flatten as text_of  # a message content's text and tool results

SERVER = "ctxkit-workflow"
FOCUS = "LIVE-FOCUS keep the plan's list of files for the review"
REVIEW = "LIVE-REVIEW-INSTR review the build against the plan"
TEMPLATE = f"""name: ship
description: plan, then review after a compaction
steps:
  - id: plan
    type: action
    instructions: "LIVE-PLAN-INSTR write the plan"
  - id: review
    type: action
    context: compact
    compact_focus: "{FOCUS}"
    instructions: "{REVIEW}"
"""
SUPERVISOR_SAYS = "ctxkit's supervisor runs `/compact` when this turn ends"
RESUMED_REPLY = "Resumed after the compaction: reviewing now."


def session_of(q):
    return (q.get("headers") or {}).get("X-Claude-Code-Session-Id") or \
        {k.lower(): v for k, v in (q.get("headers") or {}).items()}.get("x-claude-code-session-id")


def agent_of(q):
    """'interactive' or 'print' from the client's User-Agent ('(external, cli)' / '(external, sdk-cli)')."""
    ua = {k.lower(): v for k, v in (q.get("headers") or {}).items()}.get("user-agent", "")
    return "print" if "sdk-cli" in ua else "interactive" if "(external, cli)" in ua else ua


def write_settings(proj, bin_dir):
    hook = lambda prog, extra="": {"type": "command", "command": os.path.join(bin_dir, prog) + extra, "timeout": 10}
    settings = {"hooks": {
        "SessionStart": [{"hooks": [hook("ctx-session-hook")]},
                         {"matcher": "clear|compact", "hooks": [hook("ctx-gate", " --hook")]}],
        "Stop": [{"hooks": [hook("ctx-session-hook")]}],
        "SessionEnd": [{"hooks": [hook("ctx-session-hook")]}]}}
    path = os.path.join(proj, ".claude", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(settings, f, indent=1)


def run_model(Harness, bin_dir, base, model):
    """Runs the supervised session for one model; returns [(ok, what, detail)]."""
    h = Harness(base)
    proj = h.proj
    os.makedirs(os.path.join(proj, ".ctxkit", "workflows"))
    with open(os.path.join(proj, ".ctxkit", "workflows", "ship.yaml"), "w") as f:
        f.write(TEMPLATE)
    write_settings(proj, bin_dir)
    mcp_config = os.path.join(h.root, "mcp.json")
    with open(mcp_config, "w") as f:
        json.dump({"mcpServers": {SERVER: {"type": "stdio", "command": os.path.join(bin_dir, "ctx-workflow-mcp"),
                                           "args": ["--worktree", proj, "--workflow", "ship"]}}}, f)
    h.write_interactive_config()
    tool = lambda name, args, text: {"text": text, "tool": f"mcp__{SERVER}__{name}", "input": args}
    # The interactive client sends its first request before the MCP server has connected (whatever
    # MCP_CONNECTION_NONBLOCKING says), and a turn keeps the tools it started with: the model first
    # looks around with Bash, and the next request has the workflow tools.
    h.start_server({"context_window": 200000, "turns": [
        {"text": "Looking around first.", "tool": "Bash", "input": {"command": "ls", "description": "list files"}, "delay": 2},
        tool("workflow_start", {"summary": "ship the parser"}, "Starting the ship workflow."),
        tool("workflow_advance", {"output": "the plan: parser.cpp, lexer.cpp"}, "The plan is written."),
        {"text": "Ending this turn for the supervisor.", "expect": SUPERVISOR_SAYS},
        {"text": RESUMED_REPLY, "expect": REVIEW}]})

    state = os.path.join(h.root, "state")
    env = h.env({"TERM": "xterm-256color", "XDG_STATE_HOME": state, "MCP_CONNECTION_NONBLOCKING": "0"})
    envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
    sup_err = os.path.join(h.root, "supervisor.err")
    # --mcp-config takes several files: a flag after it ends the list before the prompt.
    argv = [os.path.join(bin_dir, "ctx-rollover"), "--supervise", "--", h.claude_bin, "--model", model,
            "--mcp-config", mcp_config, "--dangerously-skip-permissions", "start the ship workflow"]
    cmd = "cd %s && env -i %s %s 2>%s; echo SUPERVISOR-EXIT $?; sleep 600" % (
        shlex.quote(proj), envs, " ".join(shlex.quote(a) for a in argv), shlex.quote(sup_err))
    sess = "ctxkit-suplive-%d" % os.getpid()
    subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45", cmd], check=True)

    def screen():
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", sess], capture_output=True, text=True).stdout

    started = time.time()
    pane = ""
    try:
        for _ in range(180):  # nobody types: the launch prompt, the Stop hook and the supervisor do it all
            time.sleep(1)
            pane = screen()
            if RESUMED_REPLY in pane or "SUPERVISOR-EXIT" in pane:
                break
        time.sleep(1)
        pane = screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
        h.stop_server()
    took = time.time() - started
    with open(os.path.join(h.root, "pane.txt"), "w") as f:
        f.write(pane)
    sup_text = open(sup_err, errors="replace").read() if os.path.exists(sup_err) else ""

    results = []

    def check(cond, what, detail=""):
        results.append((bool(cond), what, "" if cond else detail))
        return bool(cond)

    reqs = h.requests()
    msgs = [q for q in reqs if q.get("kind") in ("main", "compact")]
    mains = [q for q in msgs if q["kind"] == "main"]
    first_session = session_of(mains[0]) if mains else None
    check(first_session and agent_of(mains[0]) == "interactive",
          f"the interactive client made the first request (session {first_session})",
          f"requests: {[(q['kind'], agent_of(q)) for q in msgs]}")
    # The advance's answer the model saw: in what the request adds after the model's last turn
    # (2.1.332 may send its own reminders in a message after the one with the tool result).
    def added(q):
        tail = []
        for m in reversed(q["body"]["messages"]):
            if m.get("role") == "assistant":
                break
            tail.append(text_of(m.get("content")))
        return "\n".join(reversed(tail))
    told = [q for q in mains if SUPERVISOR_SAYS in added(q)]
    check(told, "workflow_advance answered that the supervisor runs /compact when the turn ends",
          f"main requests: {len(mains)}; pane:\n{pane[-800:]}")
    compacts = [i for i, q in enumerate(msgs) if q["kind"] == "compact"]
    c = msgs[compacts[0]] if compacts else None
    # The summarizer prompt, wherever the client puts the focus in it: 2.1.332 adds its own
    # reminders (e.g. <total_tokens>) after the instructions, so the user messages are searched
    # from the one that asks for the summary on.
    c_users = [text_of(m.get("content")) for m in c["body"]["messages"] if m.get("role") == "user"] if c else []
    asks = next((i for i, t in enumerate(c_users) if any(p in t for p in SUMMARY_PHRASES)), len(c_users))
    ctext = "\n".join(c_users[asks:])
    check(c and session_of(c) == first_session and agent_of(c) == "print",
          "a compaction request on the same session, from the headless client",
          f"compaction requests: {[(session_of(msgs[i]), agent_of(msgs[i])) for i in compacts]}; "
          f"supervisor stderr: {sup_text[-600:]}")
    check("Additional Instructions" in ctext and FOCUS in ctext[ctext.find("Additional Instructions"):],
          "the compaction's summarizer prompt carries the step's focus as Additional Instructions",
          f"summarizer prompt tail: {ctext[-600:]!r}")
    after = [q for q in msgs[compacts[0] + 1:] if q["kind"] == "main"] if compacts else []
    r = after[0] if after else None
    # The prompt the supervisor resumed the session with: the last user message of that request.
    users = [m for m in r["body"]["messages"] if m.get("role") == "user"] if r else []
    rtext = text_of(users[-1].get("content")) if users else ""
    check(r and session_of(r) == first_session,
          f"the next request to the model is on the same session {first_session}",
          f"next request session: {session_of(r) if r else None}")
    check(r and agent_of(r) == "interactive", "the next request comes from the interactive client again",
          f"next request agent: {agent_of(r) if r else None}")
    check('Workflow "ship" is in progress' in rtext and REVIEW in rtext and "LIVE-PLAN-INSTR" not in rtext,
          "the resumed session's prompt is the re-anchor with the review step's instructions",
          f"resumed request messages tail: {rtext[-800:]}")
    check(RESUMED_REPLY in pane and "SUPERVISOR-EXIT" not in pane,
          "the pane shows the resumed interactive session's answer, the supervisor still running",
          f"pane:\n{pane[-1200:]}")
    check(f"ctx-rollover: compacting session {first_session} (focus: {FOCUS})" in sup_text
          and f"ctx-rollover: resuming session {first_session}" in sup_text,
          "the supervisor reported compacting and resuming the session", f"supervisor stderr: {sup_text[-600:]}")
    st = subprocess.run([os.path.join(bin_dir, "ctx-workflow"), "--worktree", proj, "status"], capture_output=True,
                        text=True, env=env, cwd=proj)
    line = next((l for l in st.stdout.splitlines() if l.startswith("Context action (compact): ")), "")
    # The status names the step's last event (handed out, or confirmed by the SessionStart hook of
    # the headless /compact) and what the supervisor did with it.
    check(st.returncode == 0 and " by supervisor" in line and "; executed at " in line
          and (" by workflow_advance" in line or "confirmed at " in line and f" by session-start:{first_session}" in line),
          f"ctx-workflow status: {line}", f"rc={st.returncode} out={st.stdout[-600:]} err={st.stderr[-300:]}")
    db = os.path.join(state, "ctxkit", "state.db")
    rows = sqlite3.connect(db).execute("SELECT kind, data FROM events WHERE source='workflow' ORDER BY id").fetchall() \
        if os.path.exists(db) else []
    events = [(k, json.loads(b)) for k, b in rows]
    seen = [(k, e.get("by"), e.get("action")) for k, e in events]
    executed = [e for k, e in events if k == "executed"]
    check(seen == [("handed_out", "workflow_advance", "compact"), ("confirmed", f"session-start:{first_session}", "compact"),
                   ("executed", "supervisor", "compact")]
          and executed[0].get("outcome") == "exit 0" and executed[0].get("session") == first_session
          and executed[0].get("focus") == FOCUS,
          "the state records the compact handed out by workflow_advance, confirmed by the SessionStart hook, "
          "executed by the supervisor (exit 0, same session, the focus)", f"events: {events}")
    return results, took


def main():
    a = live_common.parse_args(__doc__, ["ctx-rollover", "ctx-session-hook", "ctx-workflow-mcp", "ctx-gate", "ctx-workflow"])
    from harness import Harness  # noqa: E402 (the harness parse_args chose)

    for tool in ("tmux",):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0:
            sys.exit(f"check_supervised_live: {tool} not found")
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-supervised-live-")
    ok = True
    for model in a.models:
        results, took = run_model(Harness, a.bin_dir, os.path.join(work, model), model)
        for good, what, detail in results:
            print(f"{'ok  ' if good else 'FAIL'} {model}: {what}" + (f": {detail}" if detail else ""))
            ok = ok and good
        print(f"     {model}: {took:.0f} s from launch to the resumed answer")
    print("supervised live check passed" if ok else "supervised live check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
