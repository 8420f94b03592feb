#!/usr/bin/env python3
"""One run of the real Claude Code CLI against the fake API, with a hook command under test.

    cc_run.py --root DIR --script SCRIPT.json --prompt TEXT [--model M]
              [--hook-cmd "/path/ctx-remind {event}"] [--events PostToolUse,SessionStart]
              [--expect TEXT]... [--expect-not TEXT]... [--env K=V]... [--claude-arg ARG]...
              [--mcp-config FILE] [--resume ID] [--keep] [--no-record] [--replies FILE]
              [--statusline-cmd CMD] [--timeout S] [--debug]

DIR gets a fresh HOME, a git project (DIR/proj) with .claude/settings.json, the request log and the
hook log; --keep (implied by --resume) reuses them, so a second run can resume the first's session.
--hook-cmd is registered on every event of --events (default: all), "{event}" replaced by the
event's name; the recorder (hook_recorder.py) is registered beside it unless --no-record.

Prints a JSON report: rc, session_id, result, transcript, requests_log, hooks_log, hooks_fired,
requests (seq, kind, thread, turn_index of this run's requests), expect / expect_not (for each
text, up to 5 places in this run's request messages that hold it: request_seq, kind,
message_index, role, block_index, block_type, excerpt), stderr_tail when the client failed, ok.
Exit 0 when the client exited 0, every --expect text reached the model and no --expect-not text
did; else 1. The system prompt and the tool schemas are not searched, only the messages.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import EVENTS, Harness, strings_with  # noqa: E402


def places(requests, text, limit=5):
    found = []
    for q in requests:
        body = q.get("body") if isinstance(q.get("body"), dict) else {}
        for mi, message in enumerate(body.get("messages") or []):
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for bi, block in enumerate(blocks):
                for s in strings_with(block, text):
                    at = s.find(text)
                    found.append({"request_seq": q["seq"], "kind": q["kind"], "message_index": mi,
                                  "role": message.get("role"), "block_index": bi,
                                  "block_type": block.get("type") if isinstance(block, dict) else None,
                                  "excerpt": s[max(0, at - 120):at + len(text) + 120]})
                    if len(found) >= limit:
                        return found
    return found


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring for the report.")
    ap.add_argument("--root", required=True, help="work folder (HOME, project, logs)")
    ap.add_argument("--script", required=True, help="fake API script (see fake_api.py)")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--model", help="e.g. claude-sonnet-4-5 (default: the client's)")
    ap.add_argument("--hook-cmd", help='hook command under test; "{event}" becomes the event name')
    ap.add_argument("--events", help="comma-separated hook events (default: all)")
    ap.add_argument("--no-record", action="store_true", help="do not register the recorder too")
    ap.add_argument("--replies", help="what the recorder answers (see hook_recorder.py)")
    ap.add_argument("--statusline-cmd", help="status line command (interactive mode only)")
    ap.add_argument("--mcp-config", action="append", default=[], help="MCP config file for the client")
    ap.add_argument("--resume", help="session id to resume (implies --keep)")
    ap.add_argument("--keep", action="store_true", help="reuse --root as it is")
    ap.add_argument("--expect", action="append", default=[], help="text that must reach the model")
    ap.add_argument("--expect-not", action="append", default=[], help="text that must not reach the model")
    ap.add_argument("--env", action="append", default=[], help="K=V added to the client's environment")
    ap.add_argument("--claude-arg", action="append", default=[], help="extra argument for the client")
    ap.add_argument("--timeout", type=int, default=300, help="seconds before the client is killed")
    ap.add_argument("--debug", action="store_true", help="client debug log in ROOT/debug.log")
    a = ap.parse_args(argv)
    bad = [kv for kv in a.env if "=" not in kv]
    if bad:
        ap.error(f"--env {bad[0]}: expected K=V")
    unknown = [e for e in (a.events.split(",") if a.events else []) if e not in EVENTS]
    if unknown:
        ap.error(f"--events: unknown hook event {unknown[0]}")
    return a


def main(argv=None):
    a = parse_args(argv)
    try:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"cc_run: error: reading {a.script}: {e}")
    h = Harness(a.root, fresh=not (a.keep or a.resume))
    extra = {"statusLine": {"type": "command", "command": a.statusline_cmd}} if a.statusline_cmd else None
    h.write_settings(events=a.events.split(",") if a.events else EVENTS, hook_command=a.hook_cmd,
                     record=not a.no_record, extra=extra)
    if a.replies:
        with open(a.replies, encoding="utf-8") as f:
            h.set_replies(json.load(f))
    args = list(a.claude_arg)
    for config in a.mcp_config:
        args += ["--mcp-config", os.path.abspath(config)]
    if a.model:
        args += ["--model", a.model]
    if a.resume:
        args += ["--resume", a.resume]
    mark = h.mark()
    h.start_server(script)
    try:
        run = h.claude(a.prompt, args=args + ["--include-hook-events"], env=dict(kv.split("=", 1) for kv in a.env),
                       timeout=a.timeout, debug_file=os.path.join(h.root, "debug.log") if a.debug else None)
    finally:
        h.stop_server()
    with open(os.path.join(h.root, "last_stream.jsonl"), "w", encoding="utf-8") as f:
        f.write(run.stdout)
    requests = h.requests(since=mark)
    messages = [q for q in requests if q.get("kind") in ("main", "side", "compact")]
    report = {"rc": run.rc, "session_id": run.session_id, "result": (run.result or {}).get("result"),
              "transcript": h.transcript_path(run.session_id) if run.session_id else None,
              "requests_log": h.req_log, "hooks_log": h.hook_log,
              "hooks_fired": [x.get("event") for x in h.hooks(since=mark)],
              "requests": [{"seq": q["seq"], "kind": q["kind"], "thread": q.get("thread"),
                            "turn_index": q.get("turn_index")} for q in messages],
              "expect": {t: places(messages, t) for t in a.expect},
              "expect_not": {t: places(messages, t) for t in a.expect_not}}
    ok = run.rc == 0 and all(report["expect"].values()) and not any(report["expect_not"].values())
    if run.rc != 0:
        report["stderr_tail"] = run.stderr[-2000:]
    report["ok"] = ok
    print(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
