#!/usr/bin/env python3
"""Live check: ctxkit counts each model against where this client really compacts it.

Usage: check_compaction_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

For a model the client compacts at a threshold (claude-sonnet-4-6: the client's default window of
200,000 less its reserves) and one it compacts only when the API refuses the prompt
(claude-sonnet-4-5), with no setting: `claude -p` drives one turn of Bash calls against the fake
API whose replies report usage at rising shares of the model's window, until the client compacts
(or the shares run out). Then ctx-status is given the status-line input of the last reply before
the compaction (the model, the client's release, the usage) and must say, in the client's words:
  - for the threshold model, "N% until auto-compact" with the point at which the client compacted:
    the threshold its debug log names, or else between the last share it let through and the one
    after which it compacted; and 0% left (or less) at that reply;
  - for the reactive model, that the client did not compact before the window was full and the
    figure is "of window".
And ctx-remind, the run's PostToolUse hook, reminds the model against the same point: its
urgent reminder ("Context at 8x%") reaches the model in a request before the client's compaction
request (threshold model) or before the window is full (reactive model), and no reminder says a
figure of 100 % or more.
The models (--model) default to both above; another model is checked by what the client did.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import live_common

FILLS = [20, 40, 50, 60, 70, 75, 80, 82, 84, 86, 88, 90, 92, 94, 96]
MODELS = ["claude-sonnet-4-6", "claude-sonnet-4-5"]




def tokens_of(text):
    """The token count of a short form ("167k" -> 167000, "1M" -> 1000000, "2.5k" -> 2500)."""
    m = re.fullmatch(r"([0-9.]+)([kM]?)", text)
    if not m:
        return None
    return int(float(m.group(1)) * {"": 1, "k": 1000, "M": 1000000}[m.group(2)])


def result_of(stdout):
    """(client version, the model's contextWindow) from a stream-json output."""
    version, window = "", 0
    for line in stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "system" and ev.get("subtype") == "init":
            version = ev.get("claude_code_version") or version
        if ev.get("type") == "result":
            for usage in (ev.get("modelUsage") or {}).values():
                if isinstance(usage, dict) and usage.get("contextWindow"):
                    window = max(window, int(usage["contextWindow"]))
    return version, window


def main():
    a = live_common.parse_args(__doc__, ["ctx-status", "ctx-remind"])
    from harness import Harness  # noqa: E402 (the harness parse_args chose)

    models = a.model or MODELS
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-compaction-live-")
    ok = True
    for model in models:
        # The window this client gives the model, from a first call's result.
        probe = Harness(os.path.join(work, model, "probe"))
        probe.write_settings(events=[], record=False)
        probe.start_server({"turns": [{"text": "hi"}]})
        try:
            version, window = result_of(probe.claude("hi", args=["--model", model]).stdout)
        finally:
            probe.stop_server()
        if not window:
            print(f"FAIL {model}: the client reported no contextWindow")
            ok = False
            continue
        h = Harness(os.path.join(work, model, "run"))
        h.write_settings(events=["PostToolUse"], hook_command=os.path.join(a.bin_dir, "ctx-remind") + " {event}",
                         record=False)
        turns = [{"tool": "Bash", "input": {"command": "echo step%d" % i}, "fill_pct": f}
                 for i, f in enumerate(FILLS)]
        turns.append({"text": "Done.", "fill_pct": FILLS[-1]})
        h.start_server({"turns": turns, "context_window": window, "compact_text": "<summary>S</summary>"})
        debug = os.path.join(h.root, "debug.log")
        try:
            h.claude("go", args=["--model", model], debug_file=debug,
                     env={"XDG_STATE_HOME": os.path.join(h.root, "state"), "CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS": "0"})
        finally:
            h.stop_server()
        reqs = [q for q in h.requests() if q.get("kind") in ("main", "compact")]
        kinds = [q.get("kind") for q in reqs]
        # The reminders' figures in the main requests before the compaction (or in all of them).
        before = reqs[:kinds.index("compact")] if "compact" in kinds else reqs
        said = [int(p) for q in before for p in re.findall(r"Context at (\d+)%", json.dumps(q.get("body") or {}))]
        mains_before = kinds.index("compact") if "compact" in kinds else None
        text = open(debug, encoding="utf-8", errors="replace").read() if os.path.exists(debug) else ""
        logged = sorted({int(m) for m in re.findall(r"threshold (\d+)", text)})
        # The last reply before the compaction (or the last of all) as a status-line input.
        k = min(mains_before or len(FILLS), len(FILLS)) - 1
        tokens = window * FILLS[k] // 100
        payload = {"session_id": "live", "version": version, "model": {"id": model, "display_name": model},
                   "context_window": {"context_window_size": window,
                                      "current_usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0,
                                                        "cache_read_input_tokens": 0}}}
        env = dict(os.environ, HOME=h.home, XDG_STATE_HOME=os.path.join(h.root, "state"), NO_COLOR="1")
        env.pop("CLAUDE_CODE_AUTO_COMPACT_WINDOW", None)
        line = subprocess.run([os.path.join(a.bin_dir, "ctx-status")], input=json.dumps(payload), env=env,
                              cwd=h.proj, capture_output=True, text=True).stdout.strip()
        where = f"{model} on {version} (window {window})"
        urgent = [p for p in said if 85 <= p < 100]
        if not urgent or any(p >= 100 for p in said):
            print(f"FAIL {where}: reminders before the client's compaction said {sorted(set(said))}%: "
                  f"no urgent one, or one past the point")
            ok = False
        else:
            print(f"ok   {where}: reminders reached the model before the compaction at {sorted(set(said))}%")
        m = re.search(r" of (\S+) · (-?\d+)% until auto-compact", line)
        if mains_before is not None:
            low = window * FILLS[k - 1] // 100 if k > 0 else 0
            point = tokens_of(m.group(1)) if m else None
            if not m:
                print(f"FAIL {where}: the client compacted after {FILLS[k]}%, ctx-status shows no "
                      f"compaction point: {line!r}")
                ok = False
            elif logged and m.group(1) not in {live_common.short_tokens(t) for t in logged}:
                print(f"FAIL {where}: the client's threshold is {logged}, ctx-status counts against {m.group(1)}: {line!r}")
                ok = False
            elif not logged and not (low < point <= tokens + 1000):
                print(f"FAIL {where}: the client compacted after {FILLS[k]}% and not at {FILLS[k - 1]}%, "
                      f"ctx-status counts against {m.group(1)}: {line!r}")
                ok = False
            elif int(m.group(2)) > 0:
                print(f"FAIL {where}: the client compacted after this reply, ctx-status says "
                      f"{m.group(2)}% is left: {line!r}")
                ok = False
            else:
                print(f"ok   {where}: the client compacted after {FILLS[k]}% (threshold {logged or '?'}); "
                      f"ctx-status at that reply: {line!r}")
        else:
            if m or "of window" not in line:
                print(f"FAIL {where}: the client did not compact up to {FILLS[-1]}%, "
                      f"ctx-status shows a compaction point: {line!r}")
                ok = False
            else:
                print(f"ok   {where}: no compaction up to {FILLS[-1]}%; ctx-status at {FILLS[k]}%: {line!r}")
    print("compaction live check passed" if ok else "compaction live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
