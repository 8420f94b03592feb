#!/usr/bin/env python3
"""Live check and recording of pins across a compaction, with the real client and the fake API.

    record_pins.py [BIN_DIR] [--model M]... [--work DIR] [--out DIR] [--only manual,auto]

For each model and each kind of compaction (manual: `/compact` typed as a headless prompt; auto:
the client's own, with CLAUDE_CODE_AUTO_COMPACT_WINDOW set small), a project registers ctxkit's
hooks as the settings install does (ctx-session-hook on SessionStart, Stop and PreCompact;
ctx-pin --hook on PreCompact, PostCompact and UserPromptSubmit), plus hook_recorder.py on the same
events. The scripted model pins 5 facts with `ctx-pin add` (Bash tool calls), a summary that keeps
3 of them is the fake API's answer to the compaction, and a later prompt follows.

Checks, from the fake API's request log:
  - the summarization request holds all 5 pins under "Additional Instructions:";
  - the first request after the compaction holds the 2 the summary dropped, re-injected, and not
    the 3 it kept;
  - ctx-status, fed the session, says "pins 3/5 kept, 2 restored"; ctx-lineage lists the compaction.
Records (with --out, default tests/fixtures/claude-code-<version>/pins/<model>/<kind>/) the hook
payloads the client sent (PreCompact, PostCompact, SessionStart compact, UserPromptSubmit), what
ctx-pin answered, the summarization request's instructions and the re-injected text, with the
home folder's path replaced by $HOME. Exit 0 when every check passed.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import live_common

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = ["LIVEPIN-ALPHA the API listens on port 8123",
        "LIVEPIN-BRAVO deploys happen on friday",
        "LIVEPIN-CHARLIE the staging cluster is east-2",
        "LIVEPIN-DELTA the release branch is rel-77",
        "LIVEPIN-ECHO owner of the schema is dana"]
KEPT, DROPPED = PINS[:3], PINS[3:]
SUMMARY = "<analysis>a</analysis><summary>LIVE-SUMMARY. Facts: " + "; ".join(KEPT) + ".</summary>"
EVENTS = {"SessionStart": ["ctx-session-hook"], "Stop": ["ctx-session-hook"],
          "PreCompact": ["ctx-session-hook", "ctx-pin --hook"], "PostCompact": ["ctx-pin --hook"],
          "UserPromptSubmit": ["ctx-pin --hook"]}


def version_of(claude_bin):
    out = subprocess.run([claude_bin, "--version"], capture_output=True, text=True).stdout
    return out.split()[0] if out.split() else "unknown"


def write_settings(h, bin_dir):
    hooks = {}
    for event, programs in EVENTS.items():
        commands = [h.recorder(event)] + [os.path.join(bin_dir, p) for p in programs]
        hooks[event] = [{"hooks": [{"type": "command", "command": c, "timeout": 30} for c in commands]}]
    path = os.path.join(h.proj, ".claude", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"hooks": hooks}, f, indent=1)


def text(value):
    return json.dumps(value, ensure_ascii=False)


def run_case(a, model, kind, work, out_root):
    from harness import Harness
    h = Harness(os.path.join(work, f"{model}-{kind}"), transcript_lines=True)
    write_settings(h, a.bin_dir)
    turns = [{"tool": "Bash", "input": {"command": f"{a.bin_dir}/ctx-pin add '{p}'"}, "id": f"toolu_pin{i}"}
             for i, p in enumerate(PINS)]
    env = {"PATH": a.bin_dir + ":/usr/local/bin:/usr/bin:/bin"}
    if kind == "auto":
        # The reply to the last pin reports 90,000 tokens, past the threshold of a 50k window
        # (the client holds it at 80k: 67,000): the client compacts by itself before its next
        # request, in the middle of the turn; the next prompt brings back what it dropped.
        env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = "50000"
        turns[-1]["fill_pct"] = 45
    turns.append({"text": "Pinned the five facts."})
    turns.append({"text": "Reply after the compaction."})
    h.start_server({"turns": turns, "compact_text": SUMMARY, "context_window": 200000})
    problems = []
    try:
        r = h.claude("pin the facts", args=["--model", model], env=env)
        sid = r.session_id
        if r.rc != 0 or not sid:
            return [f"first run: rc {r.rc}: {r.stderr[-300:]}"], None
        if kind == "manual":
            r2 = h.claude("/compact", args=["--resume", sid, "--model", model], env=env)
            if r2.rc != 0:
                problems.append(f"/compact: rc {r2.rc}")
        mark = h.mark()
        r3 = h.claude("go on", args=["--resume", sid, "--model", model], env=env)
        if r3.rc != 0:
            problems.append(f"resume: rc {r3.rc}: {r3.stderr[-300:]}")
    finally:
        h.stop_server()
    compacts = h.requests(kind="compact")
    if not compacts:
        return problems + ["no compaction request was made"], None
    body = text(compacts[-1]["body"])
    instr_at = body.find("Additional Instructions:")
    instructions = body[instr_at:body.find("REMINDER:", instr_at)] if instr_at >= 0 else ""
    for p in PINS:
        if p not in instructions:
            problems.append(f"compaction request: '{p}' is not under Additional Instructions")
    after = [q for q in h.requests(kind="main", since=mark)]
    if not after:
        problems.append("no request after the compaction")
        first_after = ""
    else:
        first_after = text(after[0]["body"].get("messages"))
        for p in DROPPED:
            if first_after.count(p) < 1:
                problems.append(f"first request after the compaction: '{p}' was not re-injected")
        if "left out" not in first_after:
            problems.append("first request after the compaction: no re-injected pins")
        restored_at = first_after.find("left out")
        for p in KEPT:
            if restored_at >= 0 and p in first_after[restored_at:restored_at + 2000]:
                problems.append(f"'{p}' was kept by the summary but re-injected")
    # The status line and the lineage, as ctx-status and ctx-lineage see them.
    state_env = dict(os.environ, HOME=h.home, XDG_STATE_HOME=os.path.join(h.home, ".local", "state"),
                     XDG_CONFIG_HOME=os.path.join(h.home, ".config"))
    status_in = {"session_id": sid, "transcript_path": h.transcript_path(sid), "cwd": h.proj,
                 "model": {"id": model, "display_name": model},
                 "context_window": {"context_window_size": 200000,
                                    "current_usage": {"input_tokens": 5000, "cache_creation_input_tokens": 0,
                                                      "cache_read_input_tokens": 0}}}
    st = subprocess.run([os.path.join(a.bin_dir, "ctx-status"), "--no-color"], input=json.dumps(status_in),
                        capture_output=True, text=True, env=state_env, cwd=h.proj)
    if "pins 3/5 kept, 2 restored" not in st.stdout:
        problems.append(f"ctx-status: {st.stdout.strip()!r} {st.stderr.strip()!r}")
    lin = subprocess.run([os.path.join(a.bin_dir, "ctx-lineage"), sid], capture_output=True, text=True,
                         env=state_env, cwd=h.proj)
    if "compaction at" not in lin.stdout or "dropped LIVEPIN-DELTA" not in lin.stdout:
        problems.append(f"ctx-lineage: {lin.stdout.strip()!r} {lin.stderr.strip()!r}")
    record = {"client": version_of(h.claude_bin), "model": model, "kind": kind,
              "order": [(x["event"], x["stdin"].get("source") or x["stdin"].get("trigger"))
                        for x in h.hooks() if x["event"] in ("PreCompact", "PostCompact", "SessionStart")],
              "compaction_instructions": instructions, "status": st.stdout.strip(),
              "lineage": lin.stdout.replace(h.home, "$HOME")}
    if after:
        at = first_after.find("Pinned facts the last compaction")
        end = first_after.find("\\n\\n", at)
        record["reinjected"] = first_after[at:end] if at >= 0 else ""
    # The work folder's names stay out of the fixtures: the home, the project and its folder name.
    folder = "".join(c if c.isalnum() else "-" for c in h.proj)

    def clean(t):
        return t.replace(h.home, "$HOME").replace(h.proj, "$PROJECT").replace(folder, "-project")
    record["lineage"] = clean(record["lineage"])
    payloads = {}
    for x in h.hooks():
        if x["event"] in ("PreCompact", "PostCompact", "UserPromptSubmit") or \
                (x["event"] == "SessionStart" and x["stdin"].get("source") == "compact"):
            payloads.setdefault(x["event"], clean(x["stdin_raw"]))
    if out_root:
        out = os.path.join(out_root, f"claude-code-{record['client']}", "pins", model, kind)
        os.makedirs(out, exist_ok=True)
        for event, raw in payloads.items():
            with open(os.path.join(out, f"{event}.json"), "w", encoding="utf-8") as f:
                f.write(raw if raw.endswith("\n") else raw + "\n")
        with open(os.path.join(out, "observed.json"), "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False)
            f.write("\n")
    return problems, record


def main():
    def extra(ap):
        ap.add_argument("--out", help="fixtures root (default: tests/fixtures); 'none' records nothing")
        ap.add_argument("--only", default="manual,auto", help="kinds of compaction (manual, auto)")
    a = live_common.parse_args(__doc__, ["ctx-pin", "ctx-session-hook", "ctx-status", "ctx-lineage"], extra)
    work = a.work or __import__("tempfile").mkdtemp(prefix="ctxkit-pins-")
    out_root = None if a.out == "none" else (a.out or os.path.join(live_common.SOURCE, "tests", "fixtures"))
    failed = 0
    for model in a.models:
        for kind in a.only.split(","):
            problems, record = run_case(a, model, kind, work, out_root)
            label = f"{model} {kind}"
            if problems:
                failed += 1
                print(f"FAIL {label}:")
                for p in problems:
                    print(f"  - {p}")
            else:
                print(f"ok   {label}: {record['status']}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
