#!/usr/bin/env python3
"""Records what a Claude Code release writes and sends, for the unit and end-to-end tests, with the
harness of this folder (the real client against fake_api.py, nothing leaves the machine).

    record_fixtures.py [--client VERSION] [--model M]... [--out DIR] [--work DIR] [--keep-work]

The client: --client VERSION (installed by install_client.sh), else $CLAUDE_BIN, else the newest
release of the supported range (cmake/claude-code-range.txt). Both models unless --model. Writes, into DIR (default
tests/fixtures/claude-code-<the client's version>/):

    <model>/hooks/<Event>.json        every payload each hook event received across the runs below
                                      (StatusLine: the interactive client's status-line input):
                                      {"event", "count", "argv", "env", "payloads": [...]}
    <model>/basic/                    one -p session calling Read, Bash (one fails), Write, two tools
                                      at once and a subagent, every hook recorded:
                                      hooks.jsonl (the recorder's lines: event, stdin, stdin_raw,
                                      transcript_at_hook) and transcripts/<id>.jsonl with
                                      <id>/subagents/agent-<a>.jsonl
    <model>/d_compact/<kind>/         manual (/compact), reactive (after a "prompt is too long"
                                      answer) and proactive (the client's own threshold, when it
                                      compacts on its own): hooks.jsonl and transcripts/
    <model>/b_sessionstart/additionalContext/hooks.jsonl
                                      SessionStart answered with additionalContext, for startup,
                                      resume, clear and compact
    stream-json/<model>/{fresh,resume,compact,compact_empty}.jsonl
                                      the client's -p --output-format stream-json output

In the transcripts, the lines that copy the client's system prompt and tool schemas (BULKY) keep
their keys but have long strings cut. Paths of the machine are rewritten: the project is /home/user/proj, HOME /home/user (its
transcript folder -home-user-proj), other work paths below /home/user/work. Needs python3, git
and tmux (the status line only runs in the interactive client).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
MODELS = ["claude-sonnet-4-5", "claude-opus-4-8"]
NEUTRAL_HOME = "/home/user"
NEUTRAL_PROJ = "/home/user/proj"
# Transcript lines that copy the client's own system prompt and tool schemas (tens of KB each, read
# by no test): their strings longer than LONG_STRING are cut. Every other line is kept byte for byte.
BULKY = {"api-request-shape", "attachment/prompt_snapshot", "attachment/skill_listing"}
LONG_STRING = 400
# The events kept in hooks/<Event>.json, with at most this many payloads each.
MAX_PAYLOADS = 12


def slug(path):
    """The client's folder name for a project path under ~/.claude/projects."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


# The parts of a recording, and the folders each one replaces.
PARTS = {"basic": ["<model>/basic"], "session_start": ["<model>/b_sessionstart/additionalContext"],
         "compactions": ["<model>/d_compact"], "stream_json": ["stream-json/<model>"], "status_line": []}


class Rewriter:
    """Replaces the machine's paths of the recorded runs with neutral ones."""

    def __init__(self, work):
        self.pairs = []
        self.work = work

    def add_harness(self, h):
        for path, neutral in ((h.proj, NEUTRAL_PROJ), (h.home, NEUTRAL_HOME)):
            real = os.path.realpath(path)
            for p in {path, real}:
                self.pairs.append((slug(p), slug(neutral)))
                self.pairs.append((p, neutral))

    def __call__(self, text):
        for old, new in sorted(set(self.pairs), key=lambda kv: -len(kv[0])):
            text = text.replace(old, new)
        for old, new in ((os.path.realpath(self.work), NEUTRAL_HOME + "/work"), (self.work, NEUTRAL_HOME + "/work"),
                         (HERE, NEUTRAL_HOME + "/ctxkit/tests/live"), (sys.executable, "python3")):
            text = text.replace(old, new)
        return text


def range_end(which):
    """"oldest" or "newest" of cmake/claude-code-range.txt."""
    with open(os.path.join(SOURCE, "cmake", "claude-code-range.txt"), encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if len(words) == 2 and words[0] == which:
                return words[1]
    sys.exit(f"record_fixtures: error: cmake/claude-code-range.txt names no {which} release")


def client_version(claude_bin):
    home = tempfile.mkdtemp()
    try:
        out = subprocess.run([claude_bin, "--version"], capture_output=True, text=True,
                             env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
                                  "DISABLE_AUTOUPDATER": "1"}).stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)
    m = re.match(r"\s*(\d+\.\d+\.\d+)", out)
    if not m:
        sys.exit(f"record_fixtures: error: {claude_bin} --version said {out.strip()!r}")
    return m.group(1)


def choose_client(version):
    if version:
        env = dict(os.environ, CLAUDE_CODE_VERSION=version)
        env.pop("CLAUDE_BIN", None)
        p = subprocess.run([os.path.join(HERE, "install_client.sh")], stdout=subprocess.PIPE, text=True, env=env)
        if p.returncode != 0 or not p.stdout.strip():
            sys.exit(f"record_fixtures: error: could not install Claude Code {version}")
        os.environ["CLAUDE_BIN"] = p.stdout.strip().splitlines()[-1]
    from harness import claude_bin
    return claude_bin()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def must(run, what):
    if run.rc != 0:
        sys.exit(f"record_fixtures: error: {what}: the client exited {run.rc}: {run.stderr[-800:]}")
    return run


def cut_strings(value, keep=LONG_STRING):
    if isinstance(value, str):
        return value if len(value) <= keep else value[:keep] + f"[... {len(value) - keep} characters cut by the recorder]"
    if isinstance(value, list):
        return [cut_strings(v, keep) for v in value]
    if isinstance(value, dict):
        return {k: cut_strings(v, keep) for k, v in value.items()}
    return value


def shortened(text):
    """A transcript with the long strings of the client's copies of its own system prompt and tool
    schemas cut (see BULKY); every other line byte for byte."""
    out = []
    for line in text.splitlines(keepends=True):
        try:
            j = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        kind = j.get("type") if isinstance(j, dict) else None
        if kind == "attachment" and isinstance(j.get("attachment"), dict):
            kind += "/" + str(j["attachment"].get("type"))
        if kind in BULKY:
            line = json.dumps(cut_strings(j), ensure_ascii=False, separators=(",", ":")) + ("\n" if line.endswith("\n") else "")
        out.append(line)
    return "".join(out)


def copy_transcripts(h, session_ids, dest, rw):
    """The sessions' transcripts (and their subagents' files) into dest, paths rewritten, bulky
    lines shortened."""
    for sid in session_ids:
        main = h.transcript_path(sid)
        if not main:
            continue
        with open(main, encoding="utf-8") as f:
            write(os.path.join(dest, sid + ".jsonl"), shortened(rw(f.read())))
        for sub in sorted(glob.glob(os.path.join(os.path.dirname(main), sid, "subagents", "*"))):
            if sub.endswith((".jsonl", ".meta.json")):
                with open(sub, encoding="utf-8") as f:
                    text = rw(f.read())
                write(os.path.join(dest, sid, "subagents", os.path.basename(sub)),
                      shortened(text) if sub.endswith(".jsonl") else text)


def copy_hooks(h, dest, rw, events=None):
    lines = [json.dumps(x) for x in h.hooks() if events is None or x.get("event") in events]
    write(dest, rw("\n".join(lines) + ("\n" if lines else "")))


class Recording:
    def __init__(self, a, model, out, work):
        self.a, self.model, self.out, self.work = a, model, out, work
        self.rw = Rewriter(work)
        self.hook_logs = []  # every harness whose hooks feed hooks/<Event>.json

    def harness(self, name, transcript_lines=False):
        from harness import Harness
        h = Harness(os.path.join(self.work, self.model, name), transcript_lines=transcript_lines)
        self.rw.add_harness(h)
        return h

    def claude(self, h, prompt, script=None, args=(), env=None, what=""):
        if script is not None:
            h.start_server(script)
        try:
            return must(h.claude(prompt, args=["--model", self.model] + list(args), env=env), what or prompt)
        finally:
            h.stop_server()

    # scenarios
    def basic(self):
        h = self.harness("basic", transcript_lines=True)
        h.write_settings()
        write(os.path.join(h.proj, "notes.txt"), "alpha\nbeta\ngamma\n")
        os.makedirs(os.path.join(h.proj, "sub"), exist_ok=True)
        turns = [
            {"text": "Reading the notes.", "tool": "Read", "input": {"file_path": os.path.join(h.proj, "notes.txt")}, "fill_pct": 10},
            {"text": "Running a command.", "tool": "Bash", "input": {"command": "echo hi && cd sub && pwd", "description": "say hi"}, "fill_pct": 20},
            {"text": "This one fails.", "tool": "Bash", "input": {"command": "echo oops >&2; exit 3", "description": "fail on purpose"}, "fill_pct": 25},
            {"text": "Writing a file.", "tool": "Write", "input": {"file_path": os.path.join(h.proj, "out.txt"), "content": "written\n"}, "fill_pct": 30},
            {"text": "Listing.", "tool": "Bash", "input": {"command": "ls", "description": "list"}, "fill_pct": 35},
            {"text": "Two tools in parallel.", "tools": [
                {"tool": "Bash", "input": {"command": "echo par1", "description": "p1"}},
                {"tool": "Bash", "input": {"command": "echo par2", "description": "p2"}}], "fill_pct": 40},
            {"text": "Reading what I wrote.", "tool": "Read", "input": {"file_path": os.path.join(h.proj, "out.txt")}, "fill_pct": 45},
            {"thread": "main", "text": "Delegating.", "tool": "Agent", "input": {"description": "Check notes", "prompt": "Run echo sub and report",
                                                             "subagent_type": "general-purpose"}, "fill_pct": 50},
            {"thread": "subagent", "text": "Running it.", "tool": "Bash", "input": {"command": "echo sub", "description": "sub echo"},
             "fill_pct": 12},
            {"thread": "subagent", "text": "Subagent result: echo printed sub.", "fill_pct": 13},
            {"thread": "main", "text": "All done.", "fill_pct": 60}]
        r = self.claude(h, "do the kitchen-sink thing", {"context_window": 200000, "turns": turns})
        dest = os.path.join(self.out, self.model, "basic")
        copy_hooks(h, os.path.join(dest, "hooks.jsonl"), self.rw)
        copy_transcripts(h, [r.session_id], os.path.join(dest, "transcripts"), self.rw)
        self.hook_logs.append(h)
        subs = glob.glob(os.path.join(dest, "transcripts", r.session_id, "subagents", "*.jsonl"))
        print(f"  basic: session {r.session_id}, {len(h.hooks('PostToolUse'))} PostToolUse, {len(subs)} subagent file(s)")

    def session_start(self):
        h = self.harness("b_sessionstart")
        h.write_settings(events=["SessionStart"])
        h.set_replies({"SessionStart": {"json": {"hookSpecificOutput": {
            "hookEventName": "SessionStart", "additionalContext": "MARK-B-SS-ADDCTX source={source}"}}}})
        script = {"turns": [], "exhausted_text": "Noted."}
        first = self.claude(h, "hello", script)
        sid = first.session_id
        for prompt in ("again", "/clear", "/compact"):
            self.claude(h, prompt, script, args=["--resume", sid])
        copy_hooks(h, os.path.join(self.out, self.model, "b_sessionstart", "additionalContext", "hooks.jsonl"), self.rw,
                   events={"SessionStart"})
        self.hook_logs.append(h)
        print(f"  b_sessionstart: sources {[x['stdin'].get('source') for x in h.hooks('SessionStart')]}")

    def compactions(self):
        dest = os.path.join(self.out, self.model, "d_compact")
        # manual: /compact in a resumed session, then one more prompt.
        h = self.harness("d_compact_manual")
        h.write_settings()
        r = self.claude(h, "first prompt", {"context_window": 200000, "turns": [
            {"text": "Running.", "tool": "Bash", "input": {"command": "echo before-compact", "description": "before"}, "fill_pct": 40},
            {"text": "First done.", "fill_pct": 41}]})
        self.claude(h, "/compact keep the numbers", {"context_window": 200000, "turns": []}, args=["--resume", r.session_id])
        self.claude(h, "after compact", {"context_window": 200000, "turns": [{"text": "Reply after compact.", "fill_pct": 5}]},
                    args=["--resume", r.session_id])
        self.keep_compaction(h, [r.session_id], os.path.join(dest, "manual"))
        # reactive: the API refuses a request as too long; the client compacts and sends it again.
        h = self.harness("d_compact_reactive")
        h.write_settings()
        r = self.claude(h, "go", {"context_window": 200000, "turns": [
            {"text": "Step one.", "tool": "Bash", "input": {"command": "echo one", "description": "one"}, "fill_pct": 50},
            {"text": "Step two.", "tool": "Bash", "input": {"command": "echo two", "description": "two"}, "fill_pct": 90},
            {"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}},
            {"text": "Continuing after compaction.", "fill_pct": 10}]})
        self.keep_compaction(h, [r.session_id], os.path.join(dest, "reactive"))
        # proactive: past the client's own threshold (moved to 50 % here) the next prompt compacts first.
        h = self.harness("d_compact_proactive")
        h.write_settings()
        env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}
        r = self.claude(h, "go", {"context_window": 200000, "turns": [
            {"text": "Step one.", "tool": "Bash", "input": {"command": "echo one", "description": "one"}, "fill_pct": 30},
            {"text": "Step two.", "tool": "Bash", "input": {"command": "echo two", "description": "two"}, "fill_pct": 60},
            {"text": "Step three.", "tool": "Bash", "input": {"command": "echo three", "description": "three"}, "fill_pct": 90},
            {"text": "Three steps done.", "fill_pct": 91}]}, env=env)
        self.claude(h, "go on", {"context_window": 200000, "turns": [{"text": "Finished.", "fill_pct": 15}]},
                    args=["--resume", r.session_id], env=env)
        self.keep_compaction(h, [r.session_id], os.path.join(dest, "proactive"))

    def keep_compaction(self, h, sids, dest):
        boundary = any(x.get("subtype") == "compact_boundary" for sid in sids for x in h.transcript(sid))
        kind = os.path.basename(dest)
        self.hook_logs.append(h)
        if not boundary:
            print(f"  d_compact/{kind}: the client did not compact; nothing kept")
            return
        copy_hooks(h, os.path.join(dest, "hooks.jsonl"), self.rw)
        copy_transcripts(h, sids, os.path.join(dest, "transcripts"), self.rw)
        print(f"  d_compact/{kind}: kept {sids}")

    def stream_json(self):
        dest = os.path.join(self.out, "stream-json", self.model)
        h = self.harness("stream_json")
        script = {"usage_mode": "estimate", "turns": [
            {"text": "Running.", "tool": "Bash", "input": {"command": "echo task", "description": "task"}},
            {"text": "Did it.\nCTXKIT-TASK: DONE"}]}
        fresh = self.claude(h, "do the task", script)
        resume = self.claude(h, "and again", {"usage_mode": "estimate", "turns": [{"text": "Second reply."}]},
                             args=["--resume", fresh.session_id])
        compact = self.claude(h, "/compact", {"usage_mode": "estimate", "turns": []}, args=["--resume", fresh.session_id])
        e = self.harness("stream_json_empty")
        empty = self.claude(e, "/compact", {"usage_mode": "estimate", "turns": []})
        for name, run in (("fresh", fresh), ("resume", resume), ("compact", compact), ("compact_empty", empty)):
            write(os.path.join(dest, name + ".jsonl"), self.rw(run.stdout))
        print(f"  stream-json: fresh, resume, compact, compact_empty")

    def status_line(self):
        """The interactive client under tmux, the recorder as status line, until it has seen a
        response's usage."""
        h = self.harness("f_statusline")
        h.write_settings(events=["PostToolUse", "Stop"])
        h.write_interactive_config()
        h.start_server({"context_window": 200000, "turns": [
            {"text": "Running.", "tool": "Bash", "input": {"command": "echo hi", "description": "say hi"}, "fill_pct": 60},
            {"text": "Done interactive.", "fill_pct": 75}]})
        env = h.env({"TERM": "xterm-256color"})
        envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
        sess = "ctxkit-record-%d" % os.getpid()
        cmd = "cd %s && env -i %s %s --dangerously-skip-permissions --model %s" % (
            shlex.quote(h.proj), envs, shlex.quote(h.claude_bin), shlex.quote(self.model))
        subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "45", cmd], check=True)

        def wait_for(test, seconds):
            deadline = time.time() + seconds
            while time.time() < deadline:
                if test():
                    return True
                time.sleep(0.5)
            return False
        try:
            wait_for(lambda: h.hooks("StatusLine"), 30)
            subprocess.run(["tmux", "send-keys", "-t", sess, "do the thing"])
            time.sleep(1)  # the prompt box takes typed text before Enter
            subprocess.run(["tmux", "send-keys", "-t", sess, "Enter"])
            seen = wait_for(lambda: h.hooks("Stop") and any(
                (x["stdin"].get("context_window") or {}).get("current_usage") for x in h.hooks("StatusLine")), 60)
            subprocess.run(["tmux", "send-keys", "-t", sess, "/exit", "Enter"])
            wait_for(lambda: subprocess.run(["tmux", "has-session", "-t", sess], capture_output=True).returncode != 0, 10)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)
            h.stop_server()
        if not seen:
            sys.exit("record_fixtures: error: the interactive client gave no status-line input with usage")
        self.hook_logs.append(h)
        print(f"  status line: {len(h.hooks('StatusLine'))} inputs")

    def hook_tables(self):
        """hooks/<Event>.json from every run's hook log."""
        by_event = {}
        for h in self.hook_logs:
            for x in h.hooks():
                by_event.setdefault(x["event"], []).append(x)
        dest = os.path.join(self.out, self.model, "hooks")
        for event, calls in sorted(by_event.items()):
            if event == "StatusLine":
                # The inputs that carry a response's usage first, as tests read the first ones.
                calls = sorted(calls, key=lambda x: not (x["stdin"].get("context_window") or {}).get("current_usage"))
            table = {"event": event, "count": len(calls), "argv": calls[0].get("argv"), "env": calls[0].get("env"),
                     "payloads": [x["stdin"] for x in calls[:MAX_PAYLOADS]]}
            write(os.path.join(dest, event + ".json"), self.rw(json.dumps(table, indent=1) + "\n"))
        print(f"  hooks: {', '.join(sorted(by_event))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", help="Claude Code version to install and record (default: $CLAUDE_BIN)")
    ap.add_argument("--model", action="append", help="model (repeatable; default: both)")
    ap.add_argument("--out", help="output folder (default: tests/fixtures/claude-code-<version>)")
    ap.add_argument("--work", help="work folder (default: a new temporary one, removed at the end)")
    ap.add_argument("--keep-work", action="store_true", help="keep the work folder")
    ap.add_argument("--part", action="append", choices=PARTS,
                    help="record only this part (repeatable; hooks/ is written only when all parts run)")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    if not a.client and not os.environ.get("CLAUDE_BIN"):
        a.client = range_end("newest")
    claude_bin = choose_client(a.client)
    version = client_version(claude_bin)
    out = os.path.abspath(a.out or os.path.join(SOURCE, "tests", "fixtures", "claude-code-" + version))
    work = os.path.realpath(a.work or tempfile.mkdtemp(prefix="ctxkit-record-"))
    print(f"recording Claude Code {version} ({claude_bin}) into {out}")
    for model in a.model or MODELS:
        print(f"{model}:")
        rec = Recording(a, model, out, work)
        for part in a.part or PARTS:
            for old in PARTS[part]:
                shutil.rmtree(os.path.join(out, old.replace("<model>", model)), ignore_errors=True)
            getattr(rec, part)()
        if not a.part:
            shutil.rmtree(os.path.join(out, model, "hooks"), ignore_errors=True)
            rec.hook_tables()
    if not a.keep_work and not a.work:
        shutil.rmtree(work, ignore_errors=True)
    print("done")


if __name__ == "__main__":
    main()
