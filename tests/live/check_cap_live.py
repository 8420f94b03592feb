#!/usr/bin/env python3
"""Live check of ctx-cap against the real Claude Code CLI and the fake API of this folder, and the
measure of what it keeps out of a session.

Usage: check_cap_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

One scripted coding session, run twice: without ctx-cap (the client's own limits only) and with
it registered on PostToolUse as an install registers it (matcher Bash|mcp__.*), ctx-archive-mcp
as the MCP server ctxkit-archive beside a stand-in MCP server (mcp_standin.py). The session: a
test run whose log ends in a failure (25 KB), a recursive grep (20 KB), a large MCP answer (18 KB),
a file read (9 KB, never capped), a short command, a build log over the client's own limit
(60 KB); then the model asks archive_show for lines of the test log by the handle the preview
named. Checked, in the API requests (not the transcript): each capped output reached the model as
the preview (its head, its tail with the failure, the note line naming the handle), the file read
reached it whole, and archive_show answered exactly the lines asked for. Measured: the characters
of those tool results in the last request, with and without the cap (tokens about chars / 4).
"""
import json
import os
import subprocess
import sys
import tempfile

import live_common

HERE = os.path.dirname(os.path.abspath(__file__))


def test_log():
    lines = [f"tests/test_mod{i:03d}.py::test_case_{j} PASSED" for i in range(60) for j in range(10)]
    lines += ["=" * 30 + " FAILURES " + "=" * 30, "___ test_parse_header ___",
              "E   AssertionError: expected 'v2', got 'v1'", "FAILED tests/test_mod042.py::test_parse_header",
              "1 failed, 599 passed in 12.3s"]
    return "\n".join(lines) + "\n"


def setup(proj):
    with open(os.path.join(proj, "test.log"), "w") as f:
        f.write(test_log())
    os.makedirs(os.path.join(proj, "src", "pkg"), exist_ok=True)
    for i in range(40):
        with open(os.path.join(proj, "src", "pkg", f"mod{i:02d}.py"), "w") as f:
            f.writelines(f"def handler_{i}_{k}(request):  # TODO handle request {k}\n" for k in range(10))
    with open(os.path.join(proj, "notes.md"), "w") as f:
        f.writelines(f"{k}. a note line about the design of the parser, item {k}\n" for k in range(300))
    with open(os.path.join(proj, "build.log"), "w") as f:
        f.writelines(f"[{k:5d}/2000] Compiling src/unit_{k}.cpp -O2 -Wall\n" for k in range(2000))
        f.write("src/unit_1999.cpp:42:7: error: 'frobnicate' was not declared in this scope\n")


TOOLS = [
    ("toolu_shape_test", "Bash", {"command": "cat test.log", "description": "run the tests"}),
    ("toolu_shape_grep", "Bash", {"command": "grep -rn TODO src", "description": "find TODOs"}),
    ("toolu_shape_mcp", "mcp__standin__big_text", {"lines": 400, "tag": "DOCS"}),
    ("toolu_shape_read", "Read", {"file_path": "{proj}/notes.md"}),
    ("toolu_shape_small", "Bash", {"command": "git status --short | head -5; echo ok", "description": "status"}),
    ("toolu_shape_build", "Bash", {"command": "cat build.log", "description": "build"}),
]


def results(request):
    out = {}
    for message in request["body"]["messages"]:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    c = block.get("content")
                    out[block.get("tool_use_id")] = c if isinstance(c, str) else "\n".join(
                        x.get("text", "") for x in c or [] if isinstance(x, dict))
    return out


def own_text(text):
    """A tool result without the client's trailing system reminder (2.1.332)."""
    at = text.find("\n\n<system-reminder>")
    return text if at < 0 else text[:at]


def run(a, model, root, with_cap, state):
    os.makedirs(root, exist_ok=True)
    mcp = os.path.join(root, "mcp.json")
    servers = {"standin": {"type": "stdio", "command": sys.executable, "args": [os.path.join(HERE, "mcp_standin.py")]}}
    if with_cap:
        servers["ctxkit-archive"] = {"type": "stdio", "command": os.path.join(a.bin_dir, "ctx-archive-mcp"), "args": [],
                                     "env": {"CTXKIT_STATE_DIR": state}}
    with open(mcp, "w") as f:
        json.dump({"mcpServers": servers}, f)
    sys.path.insert(0, a.harness)
    from harness import Harness
    h = Harness(os.path.join(root, "run"))
    setup(h.proj)
    turns = [{"text": f"Step {tid}.", "tool": tool, "input": json.loads(json.dumps(inp).replace("{proj}", h.proj)),
              "id": tid} for tid, tool, inp in TOOLS]
    if with_cap:
        turns.append({"text": "Reading part of the test log.", "tool": "mcp__ctxkit-archive__archive_show",
                      "input": {"handle": "toolu_shape_test", "lines": "100:104"}, "id": "toolu_shape_show"})
    turns.append({"text": "Done."})
    if with_cap:
        settings = {"hooks": {"PostToolUse": [{"matcher": "Bash|mcp__.*", "hooks": [
            {"type": "command", "command": os.path.join(a.bin_dir, "ctx-cap"), "timeout": 10}]}]}}
    else:
        settings = {}
    h.write_settings(events=[], record=False, extra=settings)
    h.start_server({"turns": turns})
    try:
        r = h.claude("work on the failing test", args=["--model", model, "--mcp-config", mcp],
                     env={"ENABLE_TOOL_SEARCH": "false", "MCP_CONNECTION_NONBLOCKING": "0", "CTXKIT_STATE_DIR": state})
    finally:
        h.stop_server()
    mains = h.requests(kind="main")
    return r, (results(mains[-1]) if mains else {}), h


def main():
    a = live_common.parse_args(__doc__, ["ctx-cap", "ctx-archive-mcp"])
    base = a.work or tempfile.mkdtemp(prefix="ctxkit-cap-live-")
    failures = 0

    def check(model, what, ok, detail=""):
        nonlocal failures
        print(f"  {'ok  ' if ok else 'FAIL'} {model}: {what}" + ("" if ok or not detail else f"\n       {detail[:600]}"))
        failures += 0 if ok else 1
        return ok

    for model in a.models:
        state = os.path.join(base, model, "state")
        r0, plain, _ = run(a, model, os.path.join(base, model, "plain"), False, state)
        r1, capped, h = run(a, model, os.path.join(base, model, "cap"), True, state)
        check(model, "both runs end", r0.rc == 0 and r1.rc == 0, (r0.stderr + r1.stderr)[-600:])
        ids = [t[0] for t in TOOLS]
        if not check(model, "every tool result reached the last request", all(i in plain and i in capped for i in ids),
                     json.dumps({"plain": list(plain), "capped": list(capped)})):
            continue
        test = own_text(capped["toolu_shape_test"])
        check(model, "the test log reached the model as the preview: head, the failure at its end, the note",
              test.startswith("tests/test_mod000.py::test_case_0 PASSED") and "1 failed, 599 passed" in test
              and '"handle": "toolu_shape_test"' in test and len(test) < 4000, test[-800:])
        build = own_text(capped["toolu_shape_build"])
        check(model, "the build log over the client's own limit reached it as our preview, not the client's notice",
              "<persisted-output>" not in build and "'frobnicate' was not declared" in build
              and "toolu_shape_build" in build, build[-800:])
        mcp = own_text(capped["toolu_shape_mcp"])
        check(model, "the MCP answer reached it as the preview", "DOCS line 400 of 400" in mcp
              and '"handle": "toolu_shape_mcp"' in mcp, mcp[-600:])
        check(model, "the file read reached it whole", own_text(capped["toolu_shape_read"]) ==
              own_text(plain["toolu_shape_read"]))
        check(model, "the short command is untouched", own_text(capped["toolu_shape_small"]) ==
              own_text(plain["toolu_shape_small"]))
        shown = capped.get("toolu_shape_show", "")
        want = "".join(test_log().splitlines(True)[99:104])
        try:
            got = json.loads(own_text(shown)).get("text")
        except ValueError:
            got = None
        check(model, "archive_show answered exactly lines 100-104 of the test log", got == want, shown[:600])
        chars0 = sum(len(own_text(plain[i])) for i in ids)
        chars1 = sum(len(own_text(capped[i])) for i in ids)
        print(f"     {model}: tool-output characters reaching the model: {chars0} under the client's limits, "
              f"{chars1} with ctx-cap ({100 - 100 * chars1 / chars0:.0f}% less; ~{chars0 // 4} vs ~{chars1 // 4} tokens)")
        check(model, "the cap keeps at least half of the tool-output tokens out", chars1 <= chars0 / 2)
    print("check_cap_live: " + ("all passed" if failures == 0 else f"{failures} failed"))
    if failures == 0 and not a.work:
        subprocess.run(["rm", "-rf", base])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
