#!/usr/bin/env python3
"""Live check of ctx-trim against the real Claude Code CLI and the fake API of this folder.

Usage: check_trim_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

A real session runs two Bash calls with large outputs; ctx-trim writes a trimmed copy under a new
id; the real client resumes it with `--resume <new-id>`. Checks: the resumed run exits 0, the
request the model receives carries the truncation notice and not the cut text, the original
transcript is unchanged, and the resumed session appends to the new file.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import live_common

HERE = os.path.dirname(os.path.abspath(__file__))


def cc_run(a, root, script, model, extra):
    cmd = live_common.cc_run_argv(a) + ["--root", root, "--script", script,
           "--prompt", "continue" if "--resume" in extra else "list the numbers", "--model", model,
           "--events", "SessionStart", "--no-record"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, json.loads(p.stdout)


def main():
    a = live_common.parse_args(__doc__, ["ctx-trim"])
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-trim-live-")
    ok = True
    for model in a.models:
        root = os.path.join(work, model)
        rc, rep = cc_run(a, root, os.path.join(HERE, "scripts/big_output.json"), model, [])
        if rep["rc"] != 0:
            print(f"FAIL {model}: first run failed: {rep.get('stderr_tail')}")
            ok = False
            continue
        sid, transcript = rep["session_id"], rep["transcript"]
        first_requests = open(rep["requests_log"]).read()
        if "102499" not in first_requests or "201999" not in first_requests:
            print(f"FAIL {model}: the outputs were not sent inline in the first run (nothing to check)")
            ok = False
            continue
        digest = hashlib.sha256(open(transcript, "rb").read()).hexdigest()
        env = {"HOME": os.path.join(root, "home"), "PATH": "/usr/bin:/bin",
               "XDG_STATE_HOME": os.path.join(root, "state")}
        t = subprocess.run([os.path.join(a.bin_dir, "ctx-trim"), sid, "--json"], capture_output=True, text=True, env=env)
        if t.returncode != 0:
            print(f"FAIL {model}: ctx-trim: {t.stderr.strip()}")
            ok = False
            continue
        res = json.loads(t.stdout)
        new_id = res["session_id"]
        print(f"ok   {model}: ctx-trim wrote {new_id}, {res['results_trimmed']} results cut, ~{res['tokens_saved']} tokens saved")
        rc, rep2 = cc_run(a, root, os.path.join(HERE, "scripts/after_resume.json"), model,
                          ["--resume", new_id, "--keep",
                           "--expect", "[...truncated - original content was",
                           "--expect-not", "102499", "--expect-not", "201999"])
        if rc != 0 or rep2["rc"] != 0:
            print(f"FAIL {model}: resumed run: rc={rep2['rc']} expect={json.dumps(rep2['expect'])[:300]} "
                  f"expect_not={json.dumps(rep2['expect_not'])[:300]}")
            ok = False
        else:
            print(f"ok   {model}: resumed {new_id}: the model got the notice and not the cut text; exit 0")
        if hashlib.sha256(open(transcript, "rb").read()).hexdigest() != digest:
            print(f"FAIL {model}: the original transcript changed")
            ok = False
        new_file = os.path.join(os.path.dirname(transcript), new_id + ".jsonl")
        lines = [json.loads(l) for l in open(new_file)]
        if not any("Continuing after the trim." in json.dumps(l) for l in lines):
            print(f"FAIL {model}: the resumed session did not append to {new_file}")
            ok = False
        if rep2.get("session_id") != new_id:
            print(f"FAIL {model}: the resumed run reported session {rep2.get('session_id')}")
            ok = False
    print("trim live check passed" if ok else "trim live check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
