#!/usr/bin/env python3
"""Live check of the ctxkit Claude Code plugin against the real Claude Code CLI and the fake API
of this folder.

Usage: check_plugin_live.py [BIN_DIR] [--plugin DIR] [--model M] [--work DIR] [--harness DIR]
(see live_common.py)

--plugin DIR is the built plugin and local marketplace (`cmake --build build --target plugin`
writes build/plugin, `install.sh --plugin DIR` writes DIR); default: the plugin/ folder beside
BIN_DIR (build/plugin for build/hooks). For each model (default: both claude-sonnet-4-5 and
claude-opus-4-8), in a fresh HOME:
  1. `claude plugin marketplace add PLUGIN_DIR` and `claude plugin install ctxkit@ctxkit` succeed,
     and `ctx-settings active` then names the plugin while `ctx-settings install` refuses to
     register the same hooks a second time;
  2. in a `claude -p` run with no ctxkit entry in any settings file, the model can find and call
     the plugin's workflow MCP tools (mcp__plugin_ctxkit_ctxkit-workflow__workflow_*): offered in
     the first request's tools (2.1.197), or, where the client defers MCP tools behind its tool
     search (2.1.332: named in a "deferred tools" reminder, schemas loaded by ToolSearch), named in
     that reminder and found by a ToolSearch for what they do ("workflow step"), not by name; the plugin's
     bin/ is on the Bash tool's PATH, the PostToolUse hook (ctx-remind, from the plugin) puts its
     context reminder in the request after a tool call at 60% of the window, and a workflow_list
     call reaches ctx-workflow-mcp, whose answer (the templates in the plugin's share/ctxkit)
     reaches the model; the hooks keep their state in ~/.local/state/ctxkit as a settings
     install's do.
Exit 0 when every check passes.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import live_common

SERVER = "ctxkit-workflow"
PREFIX = f"mcp__plugin_ctxkit_{SERVER}__"
# What a model would search for, knowing what it wants and not the tools' names.
SEARCH_QUERY = "workflow step"


def client():
    """The client the harness drives ($CLAUDE_BIN, or the one it installs)."""
    import harness  # the folder live_common.parse_args put first on sys.path
    return harness.claude_bin() if hasattr(harness, "claude_bin") else harness.DEFAULT_CLAUDE


def env_for(home):
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TERM": "dumb", "LANG": "C.UTF-8",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def run(argv, home):
    p = subprocess.run(argv, env=env_for(home), capture_output=True, text=True, timeout=120)
    return p.returncode, (p.stdout + p.stderr).strip()


def main():
    a = live_common.parse_args(__doc__, [], extra=lambda ap: ap.add_argument(
        "--plugin", help="the built plugin and marketplace (default: plugin/ beside BIN_DIR)"))
    plugin = os.path.abspath(a.plugin or os.path.join(os.path.dirname(a.bin_dir), "plugin"))
    if not os.access(os.path.join(plugin, "bin", "ctx-settings"), os.X_OK):
        sys.exit(f"check_plugin_live: {plugin} holds no built plugin (cmake --build build --target plugin)")
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-plugin-live-")
    claude = client()
    ok = True

    def check(model, what, good, detail=""):
        nonlocal ok
        print(f"{'ok  ' if good else 'FAIL'} {model}: {what}" + ("" if good else f": {detail[:800]}"))
        ok = ok and good
        return good

    for model in a.models:
        base = os.path.join(work, model)
        root = os.path.join(base, "run")  # the harness keeps HOME in root/home, the project in root/proj
        home = os.path.join(root, "home")
        os.makedirs(home, exist_ok=True)

        rc, out = run([claude, "plugin", "marketplace", "add", plugin], home)
        if not check(model, "claude plugin marketplace add", rc == 0 and "Successfully added marketplace: ctxkit" in out, out):
            continue
        rc, out = run([claude, "plugin", "install", "ctxkit@ctxkit"], home)
        if not check(model, "claude plugin install ctxkit@ctxkit", rc == 0 and "Successfully installed plugin: ctxkit@ctxkit" in out, out):
            continue
        settings = os.path.join(plugin, "bin", "ctx-settings")
        rc, out = run([settings, "active"], home)
        check(model, "ctx-settings active names the plugin", rc == 0 and out.startswith("plugin: ctxkit@ctxkit enabled in "), out)
        watched = [os.path.join(home, ".claude.json"), os.path.join(home, ".claude", "settings.json")]
        before = [open(f).read() if os.path.exists(f) else None for f in watched]
        # A settings install while the plugin is enabled takes over (the later install wins): the
        # plugin is disabled, the hooks go into the settings. Then back: the settings install
        # removed, the plugin enabled again, for the checks below.
        rc, out = run([settings, "install"], home)
        user = os.path.join(home, ".claude", "settings.json")
        doc = json.load(open(user)) if os.path.exists(user) else {}
        check(model, "ctx-settings install takes over from the enabled plugin: the plugin disabled, the hooks in the settings",
              rc == 0 and (doc.get("enabledPlugins") or {}).get("ctxkit@ctxkit") is False
              and "PostToolUse" in (doc.get("hooks") or {}), out + json.dumps(doc)[:400])
        rc, out = run([settings, "uninstall"], home)
        rc2, out2 = run([claude, "plugin", "enable", "ctxkit@ctxkit"], home)
        rc3, out3 = run([settings, "active"], home)
        check(model, "back to the plugin: ctx-settings uninstall, claude plugin enable",
              rc == 0 and rc2 == 0 and out3.startswith("plugin: ctxkit@ctxkit enabled in "), out + out2 + out3)
        del before

        script = os.path.join(base, "script.json")
        # ToolSearch is the client's way to load deferred tools (2.1.332); a client without it
        # answers that call with an error and offers the tools up front.
        with open(script, "w") as f:
            json.dump({"context_window": 200000, "turns": [
                {"text": "Looking.", "tool": "Bash", "input": {"command": "command -v ctx-trim", "description": "where"},
                 "fill_pct": 60, "id": "toolu_bash"},
                {"text": "Finding the workflow tools.", "tool": "ToolSearch",
                 "input": {"query": SEARCH_QUERY, "max_results": 10}, "id": "toolu_search"},
                {"text": "Listing the workflows.", "tool": PREFIX + "workflow_list", "input": {}, "id": "toolu_list"},
                {"text": "Done."}]}, f)
        cmd = live_common.cc_run_argv(a) + ["--root", root, "--keep", "--script", script,
               "--prompt", "check the plugin", "--model", model, "--events", "PostToolUse",
               "--env", "MCP_CONNECTION_NONBLOCKING=0",
               # The client and ctxkit count the same 200k window whatever the model's own is
               # (claude-opus-4-8 is 1M against the real API, which the fake one cannot show).
               "--env", "CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000", "--expect", "Context at"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            rep = json.loads(p.stdout)
        except json.JSONDecodeError:
            check(model, "claude -p ran", False, p.stderr[-1500:])
            continue
        if not check(model, "claude -p ran", rep.get("rc") == 0, json.dumps(rep)):
            continue
        with open(rep["requests_log"]) as f:
            reqs = [q for q in (json.loads(l) for l in f if l.strip()) if q.get("kind") == "main"]
        offered = sorted(t["name"] for t in reqs[0]["body"].get("tools", []) if t["name"].startswith(PREFIX))
        first_text = json.dumps(reqs[0]["body"].get("messages", []))
        deferred = sorted(set(re.findall(re.escape(PREFIX) + r"workflow_[a-z_]+", first_text)))

        def tool_results(req):
            out = {}
            for m in req["body"]["messages"]:
                if isinstance(m["content"], list):
                    out.update({b.get("tool_use_id"): b for b in m["content"] if b.get("type") == "tool_result"})
            return out

        def text_of(block):
            c = block.get("content")
            if isinstance(c, str):
                return c
            return "".join(x.get("text", "") if x.get("type") == "text" else json.dumps(x) for x in c or [])

        results = tool_results(reqs[-1])
        if offered:
            check(model, f"the first request offers the plugin's MCP tools ({', '.join(t[len(PREFIX):] for t in offered)})",
                  PREFIX + "workflow_status" in offered and PREFIX + "workflow_start" in offered, json.dumps(offered))
        else:
            check(model, f"the client defers MCP tools; its first request names the plugin's as deferred "
                  f"({', '.join(t[len(PREFIX):] for t in deferred)})",
                  PREFIX + "workflow_status" in deferred and PREFIX + "workflow_start" in deferred, first_text[-1500:])
            found = text_of(results.get("toolu_search", {}))
            names = sorted(set(re.findall(re.escape(PREFIX) + r"workflow_[a-z_]+", found)))
            check(model, f"a ToolSearch for {SEARCH_QUERY!r} finds them ({', '.join(t[len(PREFIX):] for t in names)})",
                  PREFIX + "workflow_start" in names and PREFIX + "workflow_advance" in names
                  and not results.get("toolu_search", {}).get("is_error"), found[:1500])
        bash = text_of(results.get("toolu_bash", {}))
        check(model, "the plugin's bin/ is on the Bash tool's PATH",
              os.path.join(plugin, "bin", "ctx-trim") in bash.split(), bash[:800])
        bash_req = next((q for q in reqs if "toolu_bash" in tool_results(q)), None)
        reminder = [h for h in rep["expect"].get("Context at", []) if bash_req and h["request_seq"] == bash_req["seq"]]
        check(model, "ctx-remind's reminder (PostToolUse hook from the plugin) reached the model right after the tool call",
              bool(reminder), json.dumps(rep["expect"]))
        last = results.get("toolu_list", {})
        text = text_of(last) if last else ""
        check(model, "workflow_list through the plugin's MCP server answered the model with the plugin's templates "
              "(share/ctxkit/workflows beside its bin/)",
              bool(last) and not last.get("is_error") and '"feature"' in text and '"bugfix"' in text, json.dumps(last)[:1500])
        state = os.path.join(home, ".local", "state", "ctxkit")
        check(model, "the plugin's hooks keep their state in ctxkit's usual folder (~/.local/state/ctxkit)",
              os.path.isdir(state) and any(n.endswith(".db") or n.endswith(".sqlite") for n in os.listdir(state)),
              str(os.listdir(state) if os.path.isdir(state) else "missing"))
    print("live plugin check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
