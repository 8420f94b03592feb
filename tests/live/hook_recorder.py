#!/usr/bin/env python3
"""Hook (and status line) command that records each call for the live checks.

    hook_recorder.py --event NAME --log HOOKS.jsonl [--reply REPLIES.json] [--transcript-lines 1]

Appends one JSON object a line to the log: {"event", "ts", "pid", "argv", "cwd", "env" (the
CLAUDE* variables and HOME), "stdin" (the parsed payload, or {"unparsed": text}), "stdin_raw" (the
payload's text as the client wrote it), "reply"}; with --transcript-lines 1 also
"transcript_at_hook": {"exists", "lines"}, the payload's transcript_path as the hook found it.

REPLIES.json (read at every call, so a check can change it between runs) says what to answer:
    {"PostToolUse": {"stdout": "text"}, "SessionStart": {"json": {...}}, "*": {"stderr": "x", "exit": 2}}
the entry for the event, else "*", else nothing: "stdout" is printed as is, "json" as one line,
"stderr" goes to stderr, "exit" is the exit code (default 0). An entry may be a list of such
objects with a "when" of payload fields that must match ({"when": {"tool_name": "Bash"}}); the first
that matches is used. "{field}" in the strings is replaced by that top-level payload field.
A bad replies file is noted in the log and answered with nothing: the recorder never breaks a run.
"""
import fcntl
import json
import os
import sys
import time


def fill(value, payload):
    if isinstance(value, str):
        for key, field in payload.items():
            if isinstance(field, (str, int, float, bool)):
                value = value.replace("{" + key + "}", str(field))
        return value
    if isinstance(value, list):
        return [fill(v, payload) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, payload) for k, v in value.items()}
    return value


def choose(entry, payload):
    for candidate in entry if isinstance(entry, list) else [entry]:
        if isinstance(candidate, dict) and all(payload.get(k) == v for k, v in candidate.get("when", {}).items()):
            return candidate
    return None


def transcript_state(path):
    """{"exists", "lines"} of a transcript file at this moment."""
    if not isinstance(path, str) or not os.path.isfile(path):
        return {"exists": False}
    with open(path, "rb") as f:
        return {"exists": True, "lines": sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))}


def main():
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    event = args.get("--event", "unknown")
    log = args.get("--log", "hooks.jsonl")
    text = sys.stdin.read()
    try:
        payload = json.loads(text) if text.strip() else {}
    except ValueError:
        payload = {"unparsed": text}
    fields = payload if isinstance(payload, dict) else {}
    reply, note = {}, None
    if args.get("--reply") and os.path.exists(args["--reply"]):
        try:
            with open(args["--reply"], encoding="utf-8") as f:
                table = json.load(f)
            reply = choose(table.get(event, table.get("*", {})), fields) or {}
            reply = fill(reply, fields)
        except (OSError, ValueError, AttributeError) as e:
            reply, note = {}, f"replies file: {e}"
    out = json.dumps(reply["json"]) if "json" in reply else str(reply.get("stdout", ""))
    err = str(reply.get("stderr", ""))
    code = int(reply.get("exit", 0))
    entry = {"event": event, "ts": time.time(), "pid": os.getpid(), "argv": sys.argv, "cwd": os.getcwd(),
             "env": {k: v for k, v in os.environ.items() if k.startswith("CLAUDE") or k == "HOME"},
             "stdin": payload, "stdin_raw": text, "reply": {"stdout": out, "stderr": err, "exit": code}}
    if args.get("--transcript-lines") == "1":
        entry["transcript_at_hook"] = transcript_state(fields.get("transcript_path"))
    if note:
        entry["note"] = note
    with open(log, "a", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # hooks of one event run in parallel
        f.write(json.dumps(entry) + "\n")
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.exit(code)


if __name__ == "__main__":
    main()
