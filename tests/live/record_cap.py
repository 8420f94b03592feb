#!/usr/bin/env python3
"""Finds, with the real Claude Code client and the fake API, which replacement of a tool's output a
PostToolUse hook may give (`updatedToolOutput`) and what then reaches the model, and records it as
fixtures (tests/fixtures/claude-code-<version>/cap/):

    record_cap.py [--out DIR] [--model M] [--modes none,string,...]   # client: $CLAUDE_BIN or install_client.sh

One `claude -p` run a mode of cap_standin.py (none, string, same, same_drop, blocks, object: see
there), each run calling the same tools: Bash with 12 KB of output, Bash with 40 KB (over the
client's own limit: persisted), Bash with stderr, a Bash that exits 3, Read of a 600-line file,
Grep (content and files), Glob over 300 files and an MCP tool (mcp_standin.py, 300 lines). Written:
    payloads/<case>.json  the PostToolUse (or PostToolUseFailure) payload of each case, whole, from
                          the run without a replacement (paths of this machine made neutral)
    shapes.json           for each mode and case: the event that fired, the hook's reply (cut),
                          and the tool_result of the next API request (content cut to its head and
                          tail, its length, whether it holds the replacement and the original)
WebFetch needs a network fetch and WebSearch a server tool the fake API does not play: not covered.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import Harness  # noqa: E402

MODES = ["none", "string", "same", "same_drop", "blocks", "object"]
MCP_TOOL = "mcp__standin__big_text"
CASES = [
    # (case, tool, input, text of the original output)
    ("bash_12k", "Bash", {"command": "seq -f 'BASHMID %g' 1 1000", "description": "mid"}, "BASHMID 777"),
    ("bash_40k", "Bash", {"command": "seq -f 'BASHBIG %g' 1 4000", "description": "big"}, "BASHBIG 3999"),
    ("bash_stderr", "Bash", {"command": "seq -f 'OUTL %g' 1 300; seq -f 'ERRL %g' 1 300 >&2", "description": "err"},
     "ERRL 299"),
    ("bash_exit3", "Bash", {"command": "seq -f 'FAILL %g' 1 300; exit 3", "description": "fail"}, "FAILL 299"),
    ("read_600", "Read", {"file_path": "{proj}/big.txt"}, "READL 599"),
    ("grep_content", "Grep", {"pattern": "READL", "path": "{proj}/big.txt", "output_mode": "content", "-n": True},
     "READL 598"),
    ("grep_files", "Grep", {"pattern": "GLOBFILE", "path": "{proj}/files", "output_mode": "files_with_matches"},
     "f0299.txt"),
    ("glob_300", "Glob", {"pattern": "files/**/*.txt"}, "f0298.txt"),
    ("mcp_300", MCP_TOOL, {"lines": 300, "tag": "MCPL"}, "MCPL line 299"),
]


def cut(text, keep=400):
    return text if len(text) <= 2 * keep + 40 else text[:keep] + f"[... {len(text) - 2 * keep} chars ...]" + text[-keep:]


def cut_strings(value, keep=400):
    if isinstance(value, str):
        return cut(value, keep)
    if isinstance(value, list):
        return [cut_strings(v, keep) for v in value]
    if isinstance(value, dict):
        return {k: cut_strings(v, keep) for k, v in value.items()}
    return value


def neutral(value, h):
    text = json.dumps(value)
    for path, name in ((re.sub("[^A-Za-z0-9]", "-", h.proj), "-home-user-proj"), (h.proj, "/home/user/proj"), (h.home, "/home/user"), (h.root, "/home/user/work"),
                       (HERE, "/home/user/ctxkit/tests/live")):
        text = text.replace(path, name)
    return json.loads(text)


def setup_project(h):
    with open(os.path.join(h.proj, "big.txt"), "w") as f:
        f.writelines(f"READL {k} some text of a line\n" for k in range(600))
    os.makedirs(os.path.join(h.proj, "files", "sub"), exist_ok=True)
    for k in range(300):
        with open(os.path.join(h.proj, "files", "sub" if k % 2 else "", f"f{k:04d}.txt"), "w") as f:
            f.write("GLOBFILE\n")


def tool_results(request):
    out = {}
    for message in request["body"]["messages"]:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[block.get("tool_use_id")] = block
    return out


def block_text(block):
    c = block.get("content")
    if isinstance(c, str):
        return c
    return "\n".join(x.get("text", "") if isinstance(x, dict) else str(x) for x in c or [])


def run_mode(root, mode, model):
    h = Harness(os.path.join(root, mode))
    setup_project(h)
    log = os.path.join(h.root, "cap-hooks.jsonl")
    cmd = f"{sys.executable} {os.path.join(HERE, 'cap_standin.py')} --mode {mode} --log {log}"
    h.write_settings(events=["PostToolUse", "PostToolUseFailure"], hook_command=cmd, record=False)
    mcp = os.path.join(h.root, "mcp.json")
    with open(mcp, "w") as f:
        json.dump({"mcpServers": {"standin": {"type": "stdio", "command": sys.executable,
                                              "args": [os.path.join(HERE, "mcp_standin.py")]}}}, f)
    turns = []
    for case, tool, inp, _ in CASES:
        inp = json.loads(json.dumps(inp).replace("{proj}", h.proj))
        turns.append({"text": f"Running {case}.", "tool": tool, "input": inp, "id": f"toolu_cap_{case}"})
    turns.append({"text": "Done."})
    h.start_server({"turns": turns})
    try:
        r = h.claude("run the tools", args=["--model", model, "--mcp-config", mcp],
                     env={"ENABLE_TOOL_SEARCH": "false", "MCP_CONNECTION_NONBLOCKING": "0"})
    finally:
        h.stop_server()
    mains = [q for q in h.requests(kind="main")]
    hooks = []
    if os.path.exists(log):
        with open(log) as f:
            hooks = [json.loads(x) for x in f if x.strip()]
    return h, r, mains, hooks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="default: tests/fixtures/claude-code-<client version>/cap")
    ap.add_argument("--model", default="claude-sonnet-4-5")
    ap.add_argument("--modes", help="comma-separated modes (default: all)")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="ctxkit-cap-")
    h0 = Harness(os.path.join(root, "version"))
    version = subprocess.run([h0.claude_bin, "--version"], env=h0.env(), capture_output=True, text=True).stdout.split()[0]
    out = a.out or os.path.join(HERE, "..", "fixtures", "claude-code-" + version, "cap")
    os.makedirs(os.path.join(out, "payloads"), exist_ok=True)
    shapes = {"client_version": version, "model": a.model, "modes": {}}
    for mode in (a.modes.split(",") if a.modes else MODES):
        h, r, mains, hooks = run_mode(root, mode, a.model)
        last = tool_results(mains[-1]) if mains else {}
        listed = [t.get("name") for t in (mains[0]["body"].get("tools") or [])] if mains else []
        rows = {}
        for case, tool, _, original in CASES:
            tid = f"toolu_cap_{case}"
            hook = next((x for x in hooks if x["stdin"].get("tool_use_id") == tid), None)
            block = last.get(tid)
            text = block_text(block) if block else ""
            rows[case] = {
                "tool": tool, "listed_in_request": tool in listed,
                "event": hook["stdin"].get("hook_event_name") if hook else None,
                "reply": cut_strings(hook["reply"], 200) if hook else None,
                "tool_result": {"is_error": block.get("is_error"), "content_type": type(block.get("content")).__name__,
                                "length": len(text), "text": cut(text)} if block else None,
                "reached_replacement": ("CAPPED " + tid) in text,
                "reached_original": original in text,
                "persisted_preview": "<persisted-output>" in text,
            }
            if mode == "none" and hook:
                with open(os.path.join(out, "payloads", case + ".json"), "w", encoding="utf-8") as f:
                    json.dump(neutral(hook["stdin"], h), f, indent=1)
                    f.write("\n")
        shapes["modes"][mode] = {"rc": r.rc, "requests": len(mains), "cases": neutral(rows, h)}
        print(f"{mode:10s} rc={r.rc} " + " ".join(
            f"{c}={'R' if v['reached_replacement'] else ''}{'O' if v['reached_original'] else ''}"
            f"{'P' if v['persisted_preview'] else ''}{'-' if not v['tool_result'] else ''}" for c, v in rows.items()))
    with open(os.path.join(out, "shapes.json"), "w", encoding="utf-8") as f:
        json.dump(shapes, f, indent=1)
        f.write("\n")
    subprocess.run(["rm", "-rf", root])


if __name__ == "__main__":
    main()
