#!/usr/bin/env python3
"""Live check of the workflow MCP server and the SessionStart gate against the real Claude Code CLI
and the fake API of this folder.

Usage: check_workflow_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

The real client starts ctx-workflow-mcp from an MCP config. The model calls workflow_start and
gets {"contextAction":"/clear"} for the first step. After `claude -p --resume <id> "/clear"`, the
next request of the new session carries ctx-gate's re-anchor with the first step's instructions.
The model then calls workflow_advance and gets "/compact" for the second step; after
`claude -p --resume <id> "/compact"` the next request carries the second step's instructions.
Each action is handed out once: a workflow_status call after the advance gets the step, not the
action again. And through a loop step (two tasks, a sub-step that takes the loop's `compact` and
one with its own `clear`), workflow_advance hands out each sub-step's action once per task, and
the workflow_status after each gives that sub-step's instructions, not the action again.
"""
import json
import os
import subprocess
import sys
import tempfile

import live_common

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = "ctxkit-workflow"

TEMPLATE = """name: live-check
description: two steps, each with a context action
steps:
  - id: plan
    type: action
    context: clear
    instructions: "LIVE-PLAN-INSTR write the plan"
  - id: build
    type: action
    context: compact
    instructions: "LIVE-BUILD-INSTR build what the plan says"
"""


LOOP_TEMPLATE = """name: live-loop
description: a plan, then a loop whose sub-steps ask for context actions
steps:
  - id: plan
    type: action
    instructions: "LOOP-PLAN write the plan"
  - id: implement
    type: loop
    context: compact
loops:
  implement:
    - id: code
      instructions: "LOOP-CODE {task.id}"
    - id: test
      context: clear
      instructions: "LOOP-TEST {task.id}"
"""


def result_text(block):
    """The text of a tool_result block: its string content, or its text blocks joined."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def result_value(text):
    """The JSON object a tool answered with, found by content: the client may add text around it
    (2.1.332 appends hook context and its own <system-reminder> blocks to the tool_result);
    {"text": text} when the result holds none."""
    decoder = json.JSONDecoder()
    at = text.find("{")
    while at != -1:
        try:
            value, _ = decoder.raw_decode(text, at)
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            pass
        at = text.find("{", at + 1)
    return {"text": text}


def last_main_request(requests_log):
    with open(requests_log) as f:
        return [q for q in (json.loads(l) for l in f) if q.get("kind") == "main"][-1]


def tool_results(requests_log):
    """The tool results the model received, in order, from the last main request of a run."""
    out = []
    for message in last_main_request(requests_log)["body"]["messages"]:
        if not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append(result_value(result_text(block)))
    return out


def tool_turn(tool, args, text="Calling the workflow."):
    return {"text": text, "tool": f"mcp__{SERVER}__{tool}", "input": args}


def script(path, turns):
    with open(path, "w") as f:
        json.dump({"turns": turns + [{"text": "Done."}]}, f)
    return path


def cc_run(a, root, script_path, model, prompt, hook, env, mcp_config, extra):
    cmd = live_common.cc_run_argv(a) + ["--root", root, "--script", script_path,
           "--prompt", prompt, "--model", model, "--events", "SessionStart", "--no-record",
           "--hook-cmd", hook, "--claude-arg=--mcp-config", "--claude-arg=" + mcp_config,
           "--env", "MCP_CONNECTION_NONBLOCKING=0"] + [a for k, v in env.items() for a in ("--env", f"{k}={v}")] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"rc": p.returncode, "stderr_tail": p.stderr[-2000:], "expect": {}, "expect_not": {}}


def write_workflow(base, name, text, worktree, bin_dir):
    """(template, MCP config): the template <base>/<name>.yaml and <base>/<name>.mcp.json that starts
    ctx-workflow-mcp on it for `worktree`."""
    template = os.path.join(base, name + ".yaml")
    with open(template, "w") as f:
        f.write(text)
    mcp_config = os.path.join(base, name + ".mcp.json")
    with open(mcp_config, "w") as f:
        json.dump({"mcpServers": {SERVER: {"type": "stdio", "command": os.path.join(bin_dir, "ctx-workflow-mcp"),
                                           "args": ["--worktree", worktree, "--workflow-path", template]}}}, f)
    return template, mcp_config


def main():
    a = live_common.parse_args(__doc__, ["ctx-workflow-mcp", "ctx-gate"])
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-workflow-live-")
    bin_dir = a.bin_dir
    ok = True

    def check(model, what, rep, cond=True):
        nonlocal ok
        good = rep.get("rc") == 0 and cond and all(v for v in rep.get("expect", {}).values()) \
            and not any(v for v in rep.get("expect_not", {}).values())
        print(f"{'ok  ' if good else 'FAIL'} {model}: {what}" + ("" if good else f": {json.dumps(rep)[:600]}"))
        ok = ok and good
        return good

    for model in a.models:
        base = os.path.join(work, model)
        os.makedirs(base, exist_ok=True)
        root = os.path.join(base, "run")  # the harness makes root/proj, the worktree
        proj = os.path.join(root, "proj")
        template, mcp_config = write_workflow(base, "live-check", TEMPLATE, proj, bin_dir)
        env = {"CTXKIT_STATE_DIR": os.path.join(base, "state")}
        hook = os.path.join(bin_dir, "ctx-gate") + " --hook"
        s = lambda name, turns: script(os.path.join(base, name + ".json"), turns)

        r1 = cc_run(a, root, s("start", [tool_turn("workflow_start", {"summary": "live check"})]), model,
                    "start the workflow", hook, env, mcp_config, ["--expect", "contextAction", "--expect", "run `/clear`"])
        if not check(model, "workflow_start through the real client answers /clear", r1):
            continue
        r2 = cc_run(a, root, s("none", []), model, "/clear", hook, env, mcp_config,
                    ["--resume", r1["session_id"], "--keep"])
        cleared = r2.get("session_id")
        if not check(model, f"/clear gave a new session {cleared}", r2, bool(cleared) and cleared != r1["session_id"]):
            continue
        r3 = cc_run(a, root, s("after_clear", [tool_turn("workflow_advance", {"output": "the plan"})]), model,
                    "go on", hook, env, mcp_config,
                    ["--resume", cleared, "--keep", "--expect", "LIVE-PLAN-INSTR", "--expect", "run `/compact"])
        check(model, "the cleared session's first request carries the re-anchor; the advance answers /compact", r3)
        r4 = cc_run(a, root, s("none2", []), model, "/compact", hook, env, mcp_config, ["--resume", cleared, "--keep"])
        check(model, "/compact ran on the same session", r4, r4.get("session_id") == cleared)
        r5 = cc_run(a, root, s("after_compact", [tool_turn("workflow_status", {})]), model, "continue", hook, env,
                    mcp_config, ["--resume", cleared, "--keep", "--expect", "LIVE-BUILD-INSTR",
                                 "--expect-not", "LIVE-PLAN-INSTR"])
        check(model, "after /compact the request carries the second step's re-anchor, not the first", r5)
        # The action was handed out once: the status after it reports the step, not /compact again.
        results = tool_results(r5["requests_log"]) if r5.get("requests_log") else []
        status = results[-1] if results else None
        check(model, "workflow_status after the handed-out /compact gives the step, not the action again", r5,
              isinstance(status, dict) and status.get("step") == "build" and "contextAction" not in status)
        state = json.load(open(os.path.join(proj, "workflow-state.json")))
        check(model, "the state file is Lanes's shape at step build", r5, state.get("step") == "build" and "workflow_definition" in state)

        # A loop step: each sub-step's action handed out once per task, through the real client.
        loop_root = os.path.join(base, "loop")
        loop_proj = os.path.join(loop_root, "proj")
        loop_template, loop_mcp = write_workflow(base, "live-loop", LOOP_TEMPLATE, loop_proj, bin_dir)
        turns = [tool_turn("workflow_start", {"summary": "loop check"}),
                 tool_turn("workflow_set_tasks", {"loop_id": "implement",
                                                  "tasks": [{"id": "ta", "title": "A"}, {"id": "tb", "title": "B"}]}),
                 tool_turn("workflow_advance", {"output": "the plan"})]
        for i in range(4):
            turns += [tool_turn("workflow_status", {}), tool_turn("workflow_advance", {"output": f"step {i}"})]
        rl = cc_run(a, loop_root, s("loop", turns), model, "run the loop", hook, env, loop_mcp, [])
        results = tool_results(rl["requests_log"]) if rl.get("requests_log") else []
        actions = [r.get("contextAction") for r in results if isinstance(r, dict) and "contextAction" in r]
        statuses = [(r.get("task", {}) or {}).get("id", "") + "/" + str(r.get("subStep", ""))
                    for r in results[3:] if isinstance(r, dict) and "contextAction" not in r and r.get("stepType") == "loop"]
        check(model, f"through the loop the advances hand out {actions}: /compact then /clear for each of two tasks", rl,
              actions == ["/compact", "/clear", "/compact", "/clear"])
        check(model, f"each status after a handed-out action gives the sub-step ({statuses}), not the action again", rl,
              statuses[:4] == ["ta/code", "ta/test", "tb/code", "tb/test"])
        loop_state = json.load(open(os.path.join(loop_proj, "workflow-state.json")))
        check(model, "the loop ran to the end", rl, loop_state.get("status") == "complete")
    print("live workflow check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
