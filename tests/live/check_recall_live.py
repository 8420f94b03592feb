#!/usr/bin/env python3
"""Live check of the archive's search as the model uses it, against the real Claude Code CLI and the
fake API of this folder.

Usage: check_recall_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR]   (see live_common.py)

The client runs ctx-session-hook on SessionStart, Stop, PreCompact and SessionEnd and, once the
first run is over, starts ctx-archive-mcp (server ctxkit-archive) from the user's ~/.claude.json as
an install registers it. In a first run the model puts a unique
string in a Bash tool result and has a subagent put another one in its own; then the session is
compacted (`claude -p --resume <id> "/compact"`). In the compacted session the model receives the
SessionStart hook's line that names mcp__ctxkit-archive__archive_search, calls archive_search for
each string and gets the SESSION:LINE that holds it: the line of the tool result in the session's
transcript, and SESSION/agent-<id>:LINE in the subagent's. When the client defers MCP tools behind
its tool search (a `deferred_tools_delta` attachment, 2.1.332), the model first loads the tool with
the client's tool-search tool, as a real model would; the check says which way the tool came.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import uuid

import live_common

SERVER = "ctxkit-archive"
TOOL = f"mcp__{SERVER}__archive_search"


def script(path, turns):
    with open(path, "w") as f:
        json.dump({"turns": turns + [{"text": "Done."}]}, f)
    return path


def cc_run(a, root, script_path, model, prompt, hook, env, extra):
    cmd = live_common.cc_run_argv(a) + ["--root", root, "--script", script_path, "--prompt", prompt, "--model", model,
                                        "--events", "SessionStart,Stop,PreCompact,SessionEnd", "--no-record",
                                        "--hook-cmd", hook, "--env", "MCP_CONNECTION_NONBLOCKING=0"]
    cmd += [x for k, v in env.items() for x in ("--env", f"{k}={v}")] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"rc": p.returncode, "stderr_tail": p.stderr[-2000:], "expect": {}, "expect_not": {}}


def main_requests(requests_log):
    with open(requests_log) as f:
        return [json.loads(l) for l in f if '"kind": "main"' in l or '"kind":"main"' in l]


def tool_names(request):
    return [t.get("name", "") for t in (request.get("body", {}).get("tools") or [])]


def tool_results(request):
    """The text blocks of every tool_result of a request's messages, in order (2.1.332 appends a
    system-reminder block to a tool's own text)."""
    out = []
    for message in request["body"]["messages"]:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    c = block["content"]
                    out += [c] if isinstance(c, str) else [x.get("text", "") for x in c if isinstance(x, dict)]
    return out


def line_holding(path, text, kind="tool_result"):
    """The 1-based line of `path` whose user line carries a tool_result holding `text`."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line and '"type":"user"' in line.replace(" ", "") and kind in line:
                return n
    return None


def main():
    a = live_common.parse_args(__doc__, ["ctx-archive-mcp", "ctx-session-hook"])
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-recall-live-")
    ok = True

    def check(model, what, good, detail=""):
        nonlocal ok
        print(f"{'ok  ' if good else 'FAIL'} {model}: {what}" + ("" if good else f": {detail[:800]}"))
        ok = ok and bool(good)
        return good

    for model in a.models:
        base = os.path.join(work, model)
        os.makedirs(base, exist_ok=True)
        root = os.path.join(base, "run")
        state = os.path.join(base, "state")
        env = {"CTXKIT_STATE_DIR": state}
        hook = os.path.join(a.bin_dir, "ctx-session-hook") + " {event}"
        main_token = "RECALL-MAIN-" + uuid.uuid4().hex[:12]
        sub_token = "RECALL-SUB-" + uuid.uuid4().hex[:12]
        s = lambda name, turns: script(os.path.join(base, name + ".json"), turns)

        # 0. Which tools the client lists in its requests and which it defers behind its tool search:
        # a run without the server, then the server registered as an install registers it (in the
        # user's ~/.claude.json, which the hooks read to name the tool, merged into what the client
        # keeps there), then a run with it.
        r0 = cc_run(a, root, s("probe0", []), model, "hello", hook, env, [])
        user_config = os.path.join(root, "home", ".claude.json")
        doc = {}
        if os.path.exists(user_config):
            with open(user_config) as f:
                doc = json.load(f)
        doc.setdefault("mcpServers", {})[SERVER] = {"type": "stdio", "command": os.path.join(a.bin_dir, "ctx-archive-mcp"),
                                                    "args": [], "env": env}
        with open(user_config, "w") as f:
            json.dump(doc, f)
        probe = cc_run(a, root, s("probe", []), model, "which tools do you have?", hook, env, ["--keep"])
        reqs = main_requests(probe["requests_log"]) if probe.get("requests_log") else []
        names = tool_names(reqs[-1]) if reqs else []
        if not check(model, "the client starts with the server registered", r0.get("rc") == 0 and probe.get("rc") == 0 and names,
                     json.dumps(probe)):
            continue
        search_tool = next((n for n in names if "toolsearch" in n.lower().replace("_", "")), None)
        listed = TOOL in names
        agent_tool = "Agent" if "Agent" in names or "Task" not in names else "Task"
        agent_input = {"description": "small job", "prompt": "Run the echo and report", "subagent_type": "general-purpose"}
        # 2.1.332 runs agents in the background unless told otherwise: the main thread would take the
        # subagent's scripted turn.
        schema = next((t.get("input_schema", {}) for t in reqs[-1]["body"].get("tools") or [] if t.get("name") == agent_tool), {})
        if "run_in_background" in schema.get("properties", {}):
            agent_input["run_in_background"] = False
        print(f"     {model}: {TOOL} {'listed in the request' if listed else 'not listed (deferred)'}; {agent_tool} "
              f"{'listed' if agent_tool in names else 'not listed (deferred)'}; tool search tool: {search_tool}")

        def load(tool):
            """The turn that loads a deferred tool through the client's tool search (none when listed)."""
            if tool in names or not search_tool:
                return []
            return [{"text": f"Loading {tool}.", "tool": search_tool, "input": {"query": f"select:{tool}", "max_results": 5}}]

        # 1. A tool result and a subagent's tool result with the unique strings.
        r1 = cc_run(a, root, s("work", [
            {"text": "Running it.", "tool": "Bash", "input": {"command": f"echo {main_token}", "description": "echo"}},
            *load(agent_tool),
            {"text": "Delegating.", "tool": agent_tool, "input": agent_input},
            {"text": "Sub: running.", "tool": "Bash", "input": {"command": f"echo {sub_token}", "description": "sub echo"}},
            {"text": "Subagent done."},
        ]), model, "run the commands", hook, env, ["--keep"])
        sid = r1.get("session_id")
        if not check(model, f"the first run ends (session {sid})", r1.get("rc") == 0 and sid, json.dumps(r1)):
            continue
        transcript = r1["transcript"]
        main_line = line_holding(transcript, main_token)
        agents = glob.glob(os.path.join(os.path.dirname(transcript), sid, "subagents", "agent-*.jsonl"))
        sub_file = next((p for p in agents if line_holding(p, sub_token)), None)
        sub_line = line_holding(sub_file, sub_token) if sub_file else None
        check(model, f"the transcript holds the main string at line {main_line}, the subagent's at "
                     f"{os.path.basename(sub_file or '?')}:{sub_line}", main_line and sub_line, str(agents))

        # 2. Compaction.
        r2 = cc_run(a, root, s("none", []), model, "/compact", hook, env, ["--resume", sid, "--keep"])
        check(model, "/compact ran on the same session", r2.get("rc") == 0 and r2.get("session_id") == sid, json.dumps(r2))

        # 3. The compacted session: the model is told how to search, and its archive_search finds both.
        turns = load(TOOL) + [{"text": "Searching.", "tool": TOOL, "input": {"query": main_token}},
                              {"text": "Searching the subagent's.", "tool": TOOL, "input": {"query": sub_token, "session": sid}}]
        r3 = cc_run(a, root, s("search", turns), model, "what did the echo print before?", hook, env,
                    ["--resume", sid, "--keep", "--expect", "archived and searchable", "--expect", TOOL])
        check(model, "after the compaction the SessionStart hook's line naming the tool reaches the model",
              all(r3.get("expect", {}).values()), json.dumps(r3.get("expect")))
        reqs = main_requests(r3["requests_log"]) if r3.get("requests_log") else []
        answers = []
        for text in (tool_results(reqs[-1]) if reqs else []):
            try:
                j = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(j, dict) and "hits" in j:
                answers.append(j)
        cites = [[h["cite"] for h in ans["hits"]] for ans in answers]
        want_main = f"{sid}:{main_line}"
        want_sub = f"{sid}/{os.path.basename(sub_file)[:-6]}:{sub_line}" if sub_file else None
        check(model, f"archive_search for the tool result's string returns {want_main}",
              len(answers) >= 1 and want_main in cites[0], json.dumps({"cites": cites, "rc": r3.get("rc"),
                                                                        "results": tool_results(reqs[-1])[-3:] if reqs else []}))
        check(model, f"archive_search for the subagent's string returns {want_sub}",
              len(answers) >= 2 and want_sub in cites[1], json.dumps(cites))
    print("live recall check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
