"""The real Claude Code CLI against the fake API (fake_api.py), in a throw-away HOME and project.

    h = Harness(root)                               # root/home, root/proj (a git repository), logs
    h.write_settings(events=["PostToolUse"], hook_command="/path/ctx-remind {event}")
    h.start_server({"turns": [...]})                # fake_api on a free port of 127.0.0.1
    r = h.claude("do the thing", args=["--model", "claude-sonnet-4-5"])
    r.rc, r.session_id, r.result, r.events          # from the client's stream-json output
    h.requests(kind="main"); h.hooks("PostToolUse"); h.transcript_path(r.session_id)
    h.stop_server()

The client: $CLAUDE_BIN, else what install_client.sh prints (it installs the pinned version on
first use); the path found is put in CLAUDE_BIN for child processes.

The client's environment (env()) is built from nothing: PATH, HOME, TERM, LANG and
    IS_SANDBOX=1              as root, --dangerously-skip-permissions is refused without it
    ANTHROPIC_BASE_URL        the fake API; ANTHROPIC_API_KEY any value
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, DISABLE_TELEMETRY=1, DISABLE_AUTOUPDATER=1,
    DISABLE_ERROR_REPORTING=1 nothing leaves the machine
Print mode (-p) needs nothing in HOME. The interactive client also needs ~/.claude.json with the
onboarding done, the key approved and the project trusted (write_interactive_config()).
Settings that fail the client's validation are ignored without a word in -p mode, so hook event
names must be ones the client knows (EVENTS).
"""
import glob
import json
import os
import shutil
import subprocess
import sys

from fake_api import FakeApi

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_KEY = "sk-ant-test-ctxkit-live-0000000000"

# Hook events of Claude Code 2.1.197 (WorktreeCreate/WorktreeRemove left out: a hook on them takes
# worktree creation over from the client).
EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit",
          "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart",
          "SubagentStop", "PreCompact", "PostCompact", "PermissionRequest", "PermissionDenied", "Setup",
          "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
          "InstructionsLoaded", "CwdChanged", "FileChanged", "MessageDisplay"]


def claude_bin():
    """The client to drive (see the module docstring); exits with one line when none can be had."""
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    p = subprocess.run([os.path.join(HERE, "install_client.sh")], stdout=subprocess.PIPE, text=True)
    path = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if p.returncode != 0 or not path:
        sys.exit("harness: no Claude Code client (install_client.sh failed; set CLAUDE_BIN)")
    os.environ["CLAUDE_BIN"] = path
    return path


def read_jsonl(path):
    out = []
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        out.append({"unparsed": line})
    return out


def strings_with(value, needle):
    """Every string inside a JSON value that contains needle."""
    if isinstance(value, str):
        return [value] if needle in value else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for v in items for s in strings_with(v, needle)]


class Run:
    """One client run: exit code, output, and what its stream-json events say."""

    def __init__(self, argv, rc, stdout, stderr):
        self.argv, self.rc, self.stdout, self.stderr = argv, rc, stdout, stderr
        self.events = []
        for line in stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                if line.strip():
                    self.events.append({"text": line})
        ids = [e["session_id"] for e in self.events if isinstance(e, dict) and e.get("session_id")]
        self.session_id = ids[-1] if ids else None
        self.result = next((e for e in self.events if isinstance(e, dict) and e.get("type") == "result"), None)


class Harness:
    def __init__(self, root, fresh=True, transcript_lines=False):
        self.root = os.path.abspath(root)
        self.transcript_lines = transcript_lines  # the recorder notes the transcript's length at each hook
        if fresh and os.path.exists(self.root):
            shutil.rmtree(self.root)
        self.home = os.path.join(self.root, "home")
        self.proj = os.path.join(self.root, "proj")
        self.req_log = os.path.join(self.root, "requests.jsonl")
        self.hook_log = os.path.join(self.root, "hooks.jsonl")
        self.replies = os.path.join(self.root, "replies.json")
        self.claude_bin = claude_bin()
        self.api = None
        self.port = None
        os.makedirs(self.home, exist_ok=True)
        if not os.path.isdir(self.proj):
            os.makedirs(self.proj)
            git = ["git", "-C", self.proj, "-c", "user.name=live", "-c", "user.email=live@localhost"]
            subprocess.run(["git", "init", "-q", "-b", "main", self.proj], check=True)
            subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "start"], check=True)

    # settings
    def recorder(self, event):
        return f"{sys.executable} {os.path.join(HERE, 'hook_recorder.py')} --event {event} " \
               f"--log {self.hook_log} --reply {self.replies}" + (" --transcript-lines 1" if self.transcript_lines else "")

    def write_settings(self, events=EVENTS, hook_command=None, record=True, extra=None):
        """The project's .claude/settings.json: for each event the recorder (record) and hook_command
        ("{event}" replaced by the event's name); the recorder as status line when record; extra on top."""
        hooks = {}
        for event in events:
            commands = ([self.recorder(event)] if record else []) + \
                       ([hook_command.replace("{event}", event)] if hook_command else [])
            hooks[event] = [{"matcher": "*", "hooks": [{"type": "command", "command": c} for c in commands]}]
        settings = {"hooks": hooks}
        if record:
            settings["statusLine"] = {"type": "command", "command": self.recorder("StatusLine")}
        settings.update(extra or {})
        path = os.path.join(self.proj, ".claude", "settings.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(settings, f, indent=1)
        return path

    def set_replies(self, replies):
        """What the recorder answers (see hook_recorder.py)."""
        with open(self.replies, "w", encoding="utf-8") as f:
            json.dump(replies, f)

    def write_interactive_config(self):
        """~/.claude.json that lets the interactive client start without questions."""
        with open(os.path.join(self.home, ".claude.json"), "w", encoding="utf-8") as f:
            json.dump({"hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
                       "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []},
                       "bypassPermissionsModeAccepted": True,
                       "projects": {self.proj: {"hasTrustDialogAccepted": True,
                                                "hasCompletedProjectOnboarding": True, "allowedTools": []}}}, f)

    # the fake API
    def start_server(self, script):
        if self.api:
            self.api.load(script)
        else:
            self.api = FakeApi(script, self.req_log)
            self.port = self.api.port
        return self.port

    def stop_server(self):
        if self.api:
            self.api.close()
            self.api = None

    # the client
    def env(self, extra=None):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.home, "TERM": "dumb", "LANG": "C.UTF-8",
               "IS_SANDBOX": "1", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
               "ANTHROPIC_API_KEY": FAKE_KEY, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}
        env.update(extra or {})
        return env

    def claude(self, prompt=None, args=(), env=None, timeout=300, debug_file=None):
        """claude -p [prompt] --output-format stream-json --verbose --dangerously-skip-permissions args,
        in the project; a run past the timeout is killed and reported as rc 124."""
        argv = [self.claude_bin, "-p"] + ([prompt] if prompt is not None else []) + \
               ["--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"] + \
               (["--debug-file", debug_file] if debug_file else []) + list(args)
        try:
            p = subprocess.run(argv, cwd=self.proj, env=self.env(env), input="", capture_output=True,
                               text=True, timeout=timeout)
            return Run(argv, p.returncode, p.stdout, p.stderr)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
            return Run(argv, 124, out, f"timed out after {timeout} s")

    # what happened
    def mark(self):
        """Where the logs end now: requests(since=m) and hooks(since=m) give only later entries."""
        return len(read_jsonl(self.req_log)), len(read_jsonl(self.hook_log))

    def requests(self, kind=None, since=None):
        return [q for q in read_jsonl(self.req_log)[since[0] if since else 0:] if kind in (None, q.get("kind"))]

    def hooks(self, event=None, since=None):
        return [h for h in read_jsonl(self.hook_log)[since[1] if since else 0:] if event in (None, h.get("event"))]

    def transcript_path(self, session_id):
        found = glob.glob(os.path.join(self.home, ".claude", "projects", "*", session_id + ".jsonl"))
        return found[0] if found else None

    def transcript(self, session_id):
        return read_jsonl(self.transcript_path(session_id))
