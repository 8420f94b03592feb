#!/usr/bin/env python3
"""Live check of ctx-run (the fresh-context runner) against the real Claude Code CLI and the fake API
of this folder.

Usage: check_run_live.py [BIN_DIR] [--model M] [--work DIR] [--harness DIR] [--mode MODE]...
       (see live_common.py; --mode limits the context modes checked, default all four, the
       workflow, auto and the budgets; `--mode auto`, `--mode budget` run those alone)

ctx-run drives the real client (`claude -p`, found through CTXKIT_ROLLOVER_CLAUDE_BIN) over a
3-task file in each context mode. Task 1 (a commit) and task 2's second iteration run a tool then report
done; task 2's first iteration ends without the done marker, so the task gets a second
iteration; task 3 reports done at once. The fake API's turns are played in order, so a main
request's turn index tells which iteration sent it. From the fake API's request log:

- sessions: every main request carries the session id the run recorded for its iteration (the
  client sends it in the X-Claude-Code-Session-Id header and in metadata.user_id); the sessions
  follow the mode (continuous 1, fresh-per-task 3, fresh-per-iteration 4, hybrid 3) and the
  client kept one transcript per session;
- anchor: the first request of every fresh session has the run's anchor (anchors/NNNN.md, byte
  for byte) in its system prompt, with PROMPT.md's marker and, except in continuous mode (whose
  anchor leaves the task out: the task is the prompt), the task's title; every later request of
  the session carries the same anchor bytes (the prompt cache holds);
- git state: task 1 commits alpha.txt through the client's Bash tool and task 2 leaves beta.txt
  uncommitted; every later fresh session's anchor names task 1's commit as the last one, and task
  3's counts one uncommitted file more than task 2's (ctx-run asks git while the client exits and
  must still see what the agent did); hybrid's summary of task 1 lists alpha.txt;
- hybrid: the first request of tasks 2 and 3 carries a "Previous task summary" section with the
  previous task's title and its Decision line; fresh-per-task has no such section;
- tokens: the report's totals by kind (input, cache creation, cache read, output) equal the sums
  of the usage the fake API returned in every reply that had one (main, side and compaction
  requests). Every reply has distinct figures, so a request counted twice or missed shows.
  ctx-run reads the client's result.modelUsage, which the client sums over the API replies of
  that process; what a resumed process restores is not counted again (it would be if the check
  found more than the replies).

Auto (`--context-mode auto`): the window the client reports for the model (its result's
modelUsage contextWindow, found with one call first) decides the fake API's usage: task 1's last
reply reports a context of 60 % of it, task 2's first (a tool call, then not done) 80 %. ctx-run must start task 2
in a fresh session (an auto_decision event at 60 % of that window, its percent counted against
where the client compacts the model; the session's first request carries task 1's summary), then
compact task 2's session
before its second iteration with a real compaction request whose focus names task 2, and go on in
that session for task 3; the report counts 1 reset and 1 compaction, and the tokens the fake API
returned.

Budgets: with --max-tokens 1 and with --max-cost 0.000001 the run stops after its first
iteration (exit 3), run.json says which budget, what was spent (the report's figure) and by how
much; a --resume with a raised budget completes the run with the fake API's token sums.

A workflow template (in <project>/.ctxkit/workflows) with a `context: clear` step and a
`context: compact` step, run in continuous mode: the clear step runs in a new session, and a real
compaction request (kind "compact", with the step's compact_focus) goes out on the clear step's
session before the compact step; the compact step then resumes that session; the report shows one
reset and one compaction and the same token sums.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import live_common

MODES = ["continuous", "fresh-per-task", "fresh-per-iteration", "hybrid"]
PROMPT_MARK = "LIVE-RUN-PROMPT-5e1c"
TITLES = ["LIVE-TITLE-ALPHA parse the input", "LIVE-TITLE-BETA check the output", "LIVE-TITLE-GAMMA write the notes"]
DECISIONS = ["Decision: LIVE-DECISION-ALPHA keep the parser small", "Decision: LIVE-DECISION-BETA compare byte for byte"]
# Which task and iteration (0-based: index into the run's iterations) each iteration is.
ITER_TASK = [0, 1, 1, 2]
# Per mode: the session (0-based, in order of appearance) each of the 4 iterations runs in.
SESSIONS = {"continuous": [0, 0, 0, 0], "fresh-per-task": [0, 1, 1, 2],
            "fresh-per-iteration": [0, 1, 2, 3], "hybrid": [0, 1, 1, 2]}
KINDS = [("input", "input_tokens"), ("cache_creation", "cache_creation_input_tokens"),
         ("cache_read", "cache_read_input_tokens"), ("output", "output_tokens")]
# What side and compaction replies report (no turn): distinct from every turn's figures.
DEFAULT_USAGE = {"input_tokens": 7, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 11, "output_tokens": 13}
WORKFLOW = """name: live-run
description: plan, then build after a clear, then review after a compaction
steps:
  - id: plan
    type: action
    instructions: "LIVE-WF-PLAN write the plan"
  - id: build
    type: action
    context: clear
    instructions: "LIVE-WF-BUILD build what the plan says"
  - id: review
    type: action
    context: compact
    compact_focus: "LIVE-WF-FOCUS the review of the build"
    instructions: "LIVE-WF-REVIEW review the build"
"""


def usage(n):
    """Distinct usage figures for the n-th turn."""
    return {"input_tokens": 100 + n, "cache_creation_input_tokens": 200 + 3 * n,
            "cache_read_input_tokens": 1000 + 7 * n, "output_tokens": 30 + n}


def tool(n, command):
    return {"text": "Running a command.", "tool": "Bash", "input": {"command": command, "description": "live step"},
            "usage": usage(n)}


def text(n, body):
    return {"text": body, "usage": usage(n)}


COMMIT_MARK = "LIVE-COMMIT-alpha"


def task_turns():
    """(turns, iteration of each turn) of the 3-task run."""
    turns = [tool(0, f"echo alpha > alpha.txt && git add alpha.txt && git -c user.name=live -c user.email=live@localhost "
                     f"commit -q -m {COMMIT_MARK}"), text(1, f"Wrote alpha.txt.\n{DECISIONS[0]}\nCTXKIT-TASK: DONE"),
             text(2, "Started on the check; not finished yet."),
             tool(3, "echo beta > beta.txt"), text(4, f"Checked.\n{DECISIONS[1]}\nCTXKIT-TASK: DONE"),
             text(5, "Notes written.\nCTXKIT-TASK: DONE")]
    return turns, [0, 0, 1, 2, 2, 3]


def system_text(req):
    system = req["body"].get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system or [] if isinstance(b, dict))


def session_of(req):
    """The session id a request carries: the header, checked against metadata.user_id."""
    header = next((v for k, v in req.get("headers", {}).items() if k.lower() == "x-claude-code-session-id"), None)
    try:
        meta = json.loads(req["body"].get("metadata", {}).get("user_id", "{}")).get("session_id")
    except (ValueError, AttributeError):
        meta = None
    return header if header == meta else f"(header {header} != metadata {meta})"


def usage_sums(requests):
    """Sums by kind of the usage in every reply that has one (main, side, compact)."""
    sums = {k: 0 for k, _ in KINDS}
    counted = 0
    for q in requests:
        u = (q.get("reply") or {}).get("usage") if isinstance(q.get("reply"), dict) else None
        if not u:
            continue
        counted += 1
        for k, field in KINDS:
            sums[k] += int(u.get(field, 0))
    return sums, counted


def run_ctx(h, bin_dir, model, args):
    env = h.env({"CTXKIT_ROLLOVER_CLAUDE_BIN": h.claude_bin})
    cmd = [os.path.join(bin_dir, "ctx-run")] + args + ["--model", model, "--claude-arg=--dangerously-skip-permissions"]
    p = subprocess.run(cmd, cwd=h.proj, env=env, capture_output=True, text=True, timeout=900)
    rep = subprocess.run([os.path.join(bin_dir, "ctx-run"), "report", "--json"], cwd=h.proj, env=env,
                         capture_output=True, text=True, timeout=60)
    try:
        report = json.loads(rep.stdout)
    except ValueError:
        report = {}
    events = []
    if report.get("folder"):
        with open(os.path.join(report["folder"], "events.jsonl")) as f:
            events = [json.loads(line) for line in f if line.strip()]
    return p, report, events


def run_completed(check, what, h, bin_dir, model, script, args, iterations):
    """Runs ctx-run with the fake API playing `script`: (report, events, the iteration events) when
    `what` completed in `iterations` iterations (a check either way), else None."""
    h.start_server(script)
    try:
        p, report, events = run_ctx(h, bin_dir, model, args)
    finally:
        h.stop_server()
    iters = [e for e in events if e["event"] == "iteration"]
    if not check(f"{what} completed in {iterations} iterations", p.returncode == 0 and report.get("status") == "completed"
                 and len(iters) == iterations, f"rc {p.returncode} {p.stdout[-300:]} {p.stderr[-1200:]}"):
        return None
    return report, events, iters


class Checker:
    def __init__(self):
        self.ok = True

    def __call__(self, label, cond, detail=""):
        print(f"{'ok  ' if cond else 'FAIL'} {label}" + ("" if cond else f": {detail}"[:1500]))
        self.ok = self.ok and bool(cond)
        return cond


def check_tokens(check, label, h, report):
    sums, counted = usage_sums(h.requests())
    got = {k: report.get("totals", {}).get("usage", {}).get(k) for k, _ in KINDS}
    check(f"{label}: the report's tokens by kind equal the sums of the fake API's usage over {counted} replies "
          f"({sum(sums.values())} tokens)", got == sums, f"report {got}, fake API {sums}")


def check_mode(a, Harness, root, model, mode, check):
    label = f"{model} {mode}"
    h = Harness(root)
    with open(os.path.join(h.proj, "PROMPT.md"), "w") as f:
        f.write(f"{PROMPT_MARK}: keep every change small and tested.\n")
    with open(os.path.join(h.proj, "tasks.yaml"), "w") as f:
        for i, title in enumerate(TITLES):
            f.write(f"- id: t{i + 1}\n  title: \"{title}\"\n  description: the live check's task {i + 1}\n")
    turns, turn_iter = task_turns()
    done = run_completed(check, f"{label}: the run", h, a.bin_dir, model, {"turns": turns, "default_usage": DEFAULT_USAGE},
                         ["tasks.yaml", "--context-mode", mode], 4)
    if not done:
        return
    report, events, iters = done
    # Sessions.
    recorded = [e["session_id"] for e in iters]
    order = list(dict.fromkeys(recorded))
    check(f"{label}: the run's sessions follow the mode ({len(order)})",
          [order.index(s) for s in recorded] == SESSIONS[mode], recorded)
    main = h.requests(kind="main")
    wrong = [(q["seq"], q["turn_index"], session_of(q)) for q in main
             if q["turn_index"] is None or q["turn_index"] < 0 or session_of(q) != recorded[turn_iter[q["turn_index"]]]]
    check(f"{label}: each of the {len(main)} main requests carries its iteration's recorded session",
          not wrong and len(main) == len(turns), wrong or f"{len(main)} main requests for {len(turns)} turns")
    in_requests = list(dict.fromkeys(session_of(q) for q in h.requests() if q.get("kind") in ("main", "side", "compact")))
    transcripts = sorted(os.path.basename(t)[:-6] for t in glob.glob(os.path.join(h.home, ".claude", "projects", "*", "*.jsonl")))
    check(f"{label}: the requests and the client's transcripts show exactly the recorded sessions",
          in_requests == order and transcripts == sorted(order), f"requests {in_requests} transcripts {transcripts} run {order}")
    # The anchor of each session: in its first request, and byte for byte in every later one.
    anchors = {e["session_id"]: e for e in events if e["event"] == "session_started"}
    run_state = json.load(open(os.path.join(report["folder"], "run.json")))
    anchor_files = sorted(glob.glob(os.path.join(report["folder"], "anchors", "*.md")))
    check(f"{label}: one anchor file per session", len(anchor_files) == len(order) and set(anchors) == set(order),
          f"{anchor_files} {list(anchors)} {run_state.get('session')}")
    counts = {}
    for n, (sid, path) in enumerate(zip(order, anchor_files)):
        anchor = open(path, encoding="utf-8").read()
        reqs = [q for q in main if session_of(q) == sid]
        first = reqs[0] if reqs else {"body": {}}
        task = ITER_TASK[recorded.index(sid)]
        want = [PROMPT_MARK] + ([TITLES[task]] if mode != "continuous" else [])
        sys_first = system_text(first)
        check(f"{label}: session {n + 1}'s first request has the anchor ({len(anchor)} bytes: "
              f"{', '.join(w.split()[0] for w in want)}) in its system prompt",
              anchor.rstrip("\n") in sys_first and all(w in anchor for w in want),
              f"anchor {anchor[:300]!r} system {sys_first[-800:]!r}")
        check(f"{label}: session {n + 1}'s {len(reqs) - 1} later request(s) carry the same anchor bytes",
              all(anchor.rstrip("\n") in system_text(q) for q in reqs[1:]))
        # The git state as the session starts: task 1 committed alpha.txt through the client's Bash
        # tool, task 2 left beta.txt uncommitted (asked while the client exited, so it must
        # still be right).
        if task > 0 and mode != "continuous":
            git_part = anchor.split("## Git state (when this session started)\n", 1)[-1]
            m = re.search(r"Uncommitted files: (\d+)\nLast commits:\n[0-9a-f]+ (\S+)", git_part)
            counts[task] = int(m.group(1)) if m else None
            check(f"{label}: session {n + 1}'s git state has task 1's commit as the last one",
                  m is not None and m.group(2) == COMMIT_MARK, git_part[:400])
        if mode == "continuous":
            check(f"{label}: the task's title is in the prompt of its first request",
                  TITLES[ITER_TASK[0]] in json.dumps(first["body"].get("messages", [])))
        # Hybrid: the previous task's summary in tasks 2 and 3's first request.
        if task > 0 and mode in ("hybrid", "fresh-per-task"):
            section = sys_first.split("## Previous task summary", 1)
            if mode == "hybrid":
                prev = section[1] if len(section) > 1 else ""
                decision_ok = DECISIONS[task - 1].split()[1] in prev
                check(f"{label}: task {task + 1}'s first request carries task {task}'s summary",
                      TITLES[task - 1] in prev and TITLES[task] not in prev and decision_ok,
                      f"section {prev[:600]!r}")
            else:
                check(f"{label}: task {task + 1}'s first request has no previous task summary", len(section) == 1)
    if mode != "continuous":
        check(f"{label}: task 3's git state counts task 2's uncommitted beta.txt ({counts})",
              counts.get(1) is not None and counts.get(2) == counts[1] + 1)
    if mode == "hybrid":
        summary = open(os.path.join(report["folder"], "tasks", "t1", "summary.md"), encoding="utf-8").read()
        check(f"{label}: task 1's summary lists its committed alpha.txt", "- alpha.txt\n" in summary, summary[:500])
    check_tokens(check, label, h, report)
    check(f"{label}: the report counts {len(order) - 1} context reset(s)",
          report["totals"].get("resets") == len(order) - 1, report["totals"])


def check_workflow(a, Harness, root, model, check):
    label = f"{model} workflow"
    h = Harness(root)
    with open(os.path.join(h.proj, "PROMPT.md"), "w") as f:
        f.write(f"{PROMPT_MARK}: follow the workflow.\n")
    os.makedirs(os.path.join(h.proj, ".ctxkit", "workflows"))
    with open(os.path.join(h.proj, ".ctxkit", "workflows", "live-run.yaml"), "w") as f:
        f.write(WORKFLOW)
    # The build step runs a tool: the client compacts nothing shorter ("Not enough messages").
    turns = [text(0, "The plan: one file.\nCTXKIT-TASK: DONE"),
             tool(1, "echo built > build.txt"), text(2, "Built build.txt.\nCTXKIT-TASK: DONE"),
             text(3, "Reviewed: fine.\nCTXKIT-TASK: DONE")]
    turn_iter = [0, 1, 1, 2]
    done = run_completed(check, f"{label}: the workflow run", h, a.bin_dir, model,
                         {"turns": turns, "default_usage": DEFAULT_USAGE,
                          "compact_text": "<analysis>a</analysis>\n<summary>LIVE-WF-SUMMARY the plan and the build.</summary>"},
                         ["--workflow", "live-run", "--summary", "live run", "--context-mode", "continuous"], 3)
    if not done:
        return
    report, events, iters = done
    recorded = [e["session_id"] for e in iters]
    main = h.requests(kind="main")
    wrong = [(q["seq"], q["turn_index"], session_of(q)) for q in main
             if q["turn_index"] is None or q["turn_index"] < 0 or session_of(q) != recorded[turn_iter[q["turn_index"]]]]
    check(f"{label}: each main request carries its step's recorded session", not wrong and len(main) == len(turns), wrong)
    check(f"{label}: context: clear started a new session for the build step, the review resumed it",
          recorded[1] != recorded[0] and recorded[2] == recorded[1], recorded)
    compacts = h.requests(kind="compact")
    build_seq = max(q["seq"] for q in main if turn_iter[q["turn_index"]] == 1)
    review_seq = min(q["seq"] for q in main if turn_iter[q["turn_index"]] == 2)
    check(f"{label}: context: compact sent one real compaction request on the build's session, with the step's focus, "
          "between the build and the review",
          len(compacts) == 1 and session_of(compacts[0]) == recorded[1] and build_seq < compacts[0]["seq"] < review_seq
          and "LIVE-WF-FOCUS" in json.dumps(compacts[0]["body"].get("messages", [])),
          [(q["seq"], session_of(q)) for q in compacts])
    review = [q for q in main if turn_iter[q["turn_index"]] == 2]
    msgs = json.dumps(review[0]["body"].get("messages", [])) if review else ""
    check(f"{label}: the review's request carries the compaction summary and its instructions, not the build's tool call",
          "LIVE-WF-SUMMARY" in msgs and "LIVE-WF-REVIEW" in msgs and "echo built > build.txt" not in msgs, msgs[-600:])
    compacted = [e for e in events if e["event"] == "compacted"]
    check(f"{label}: the run recorded the compaction with the client's compact boundary",
          len(compacted) == 1 and compacted[0].get("boundary") is True and compacted[0]["session_id"] == recorded[1], compacted)
    check(f"{label}: the report counts 1 reset and 1 compaction",
          report["totals"].get("resets") == 1 and report["totals"].get("compactions") == 1, report.get("totals"))
    check_tokens(check, label, h, report)


def client_window(h, model):
    """The contextWindow the client reports for `model` (one call against the fake API)."""
    h.start_server({"turns": [text(0, "Hello.")], "default_usage": DEFAULT_USAGE})
    try:
        r = h.claude("hi", args=["--model", model])
    finally:
        h.stop_server()
    for line in r.stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") == "result":
            return max((m.get("contextWindow", 0) for m in (ev.get("modelUsage") or {}).values()), default=0)
    return 0


def context_usage(tokens):
    """A reply's usage whose context (input, cache creation, cache read) is `tokens`."""
    return {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": tokens - 5, "output_tokens": 20}


def check_auto(a, Harness, root, model, check):
    label = f"{model} auto"
    window = client_window(Harness(root + "-probe"), model)
    h = Harness(root)
    if not check(f"{label}: the client reports a context window for the model ({window})", window > 0):
        return
    with open(os.path.join(h.proj, "PROMPT.md"), "w") as f:
        f.write(f"{PROMPT_MARK}: keep every change small and tested.\n")
    with open(os.path.join(h.proj, "tasks.yaml"), "w") as f:
        for i, title in enumerate(TITLES):
            f.write(f"- id: t{i + 1}\n  title: \"{title}\"\n  description: the live check's task {i + 1}\n")
    big, bigger = window * 60 // 100, window * 80 // 100
    # Task 2's first iteration runs a tool: a client compacts nothing shorter (2.1.197 answers "Not
    # enough messages to compact." on a session of one exchange).
    turns = [tool(0, "echo alpha > alpha.txt"),
             {"text": f"Wrote alpha.txt.\n{DECISIONS[0]}\nCTXKIT-TASK: DONE", "usage": context_usage(big)},
             tool(2, "echo beta > beta.txt"),
             {"text": "Started on the check; not finished yet.", "usage": context_usage(bigger)},
             text(4, f"Checked.\n{DECISIONS[1]}\nCTXKIT-TASK: DONE"),
             text(5, "Notes written.\nCTXKIT-TASK: DONE")]
    turn_iter = [0, 0, 1, 1, 2, 3]
    done = run_completed(check, f"{label}: the run", h, a.bin_dir, model,
                         {"turns": turns, "default_usage": DEFAULT_USAGE,
                          "compact_text": "<analysis>a</analysis>\n<summary>LIVE-AUTO-SUMMARY the first tasks.</summary>"},
                         ["tasks.yaml", "--context-mode", "auto"], 4)
    if not done:
        return
    report, events, iters = done
    recorded = [e["session_id"] for e in iters]
    order = list(dict.fromkeys(recorded))
    check(f"{label}: task 2 starts a fresh session, task 3 goes on in it", [order.index(s) for s in recorded] == [0, 1, 1, 1], recorded)
    # The percent is of the denominator (the usable part, ending where this client compacts the
    # model, or the window when it compacts only on the API's refusal), as the reminders count it.
    decisions = [(e["decision"], e["task_id"], e["percent"], e["context_tokens"], e["window"], e.get("denominator"))
                 for e in events if e["event"] == "auto_decision"]
    expected = [(kind, "t2", tokens * 100 // d, tokens, window, d)
                for (kind, tokens), d in zip([("fresh", big), ("compact", bigger)],
                                             [x[5] or window for x in decisions] + [window] * 2)]
    check(f"{label}: auto decided fresh and compact from the {window}-token window the client reported "
          f"(60 % and 80 % of it, counted against where it compacts)",
          len(decisions) == 2 and decisions == expected
          # the whole window (compacted only on the API's refusal) or the client's threshold:
          # window - min(max_output, 20,000) - 13,000, every listed model's output being above 20k
          and all(x[5] in (window, window - 33000) for x in decisions), decisions)
    main = h.requests(kind="main")
    first_t2 = next((q for q in main if q["turn_index"] == 2), None)
    prev = system_text(first_t2).split("## Previous task summary", 1) if first_t2 else []
    check(f"{label}: task 2's fresh session carries task 1's summary",
          len(prev) == 2 and TITLES[0] in prev[1] and "LIVE-DECISION-ALPHA" in prev[1], prev[-1][:500] if prev else "no request")
    compacts = h.requests(kind="compact")
    seq_of = {q["turn_index"]: q["seq"] for q in main}
    check(f"{label}: one real compaction request on task 2's session, between its iterations, with task 2 as the focus",
          len(compacts) == 1 and session_of(compacts[0]) == order[1] and seq_of.get(3, 0) < compacts[0]["seq"] < seq_of.get(4, 0)
          and "LIVE-TITLE-BETA" in json.dumps(compacts[0]["body"].get("messages", [])),
          [(q["seq"], session_of(q)) for q in compacts])
    wrong = [(q["seq"], q["turn_index"], session_of(q)) for q in main
             if q["turn_index"] is None or q["turn_index"] < 0 or session_of(q) != recorded[turn_iter[q["turn_index"]]]]
    check(f"{label}: each main request carries its iteration's recorded session", not wrong and len(main) == len(turns), wrong)
    check(f"{label}: the report counts 1 reset and 1 compaction, and a peak context of {bigger}",
          report["totals"].get("resets") == 1 and report["totals"].get("compactions") == 1
          and report["totals"].get("peak_context") == bigger, report.get("totals"))
    check_tokens(check, label, h, report)


def check_budget(a, Harness, root, model, check):
    for flag, value, budget in (("--max-tokens", "1", "tokens"), ("--max-cost", "0.000001", "cost")):
        label = f"{model} budget {budget}"
        h = Harness(os.path.join(root, budget))
        with open(os.path.join(h.proj, "tasks.yaml"), "w") as f:
            for i, title in enumerate(TITLES):
                f.write(f"- id: t{i + 1}\n  title: \"{title}\"\n  description: the live check's task {i + 1}\n")
        turns, _ = task_turns()
        script = {"turns": turns, "default_usage": DEFAULT_USAGE}
        h.start_server(script)
        try:
            p, report, events = run_ctx(h, a.bin_dir, model, ["tasks.yaml", flag, value])
            iters = [e for e in events if e["event"] == "iteration"]
            stopped = report.get("stopped_on") or {}
            spent = report.get("totals", {}).get("usage", {}).get("total") if budget == "tokens" else report.get("totals", {}).get("cost_usd")
            check(f"{label}: {flag} {value} stops the run after its first iteration (exit 3) and names the budget",
                  p.returncode == 3 and len(iters) == 1 and report.get("status") == "stopped" and stopped.get("budget") == budget
                  and stopped.get("scope") == "run", f"rc {p.returncode} {len(iters)} iterations {stopped} {p.stderr[-800:]}")
            check(f"{label}: what was spent ({spent}) is the report's, and over by spent - limit",
                  spent and abs(stopped.get("spent", -1) - spent) < 1e-9 and abs(stopped.get("over", -1) - (spent - float(value))) < 1e-9,
                  stopped)
            env = h.env({"CTXKIT_ROLLOVER_CLAUDE_BIN": h.claude_bin})
            r = subprocess.run([os.path.join(a.bin_dir, "ctx-run"), "--resume", report.get("run_id", "?"), flag,
                                "100000000" if budget == "tokens" else "1000", "--model", model,
                                "--claude-arg=--dangerously-skip-permissions"],
                               cwd=h.proj, env=env, capture_output=True, text=True, timeout=900)
        finally:
            h.stop_server()
        rep = json.loads(subprocess.run([os.path.join(a.bin_dir, "ctx-run"), "report", "--json"], cwd=h.proj,
                                        env=h.env({}), capture_output=True, text=True).stdout or "{}")
        check(f"{label}: a --resume with a raised budget completes the run (4 iterations)",
              r.returncode == 0 and rep.get("status") == "completed" and rep.get("totals", {}).get("iterations") == 4,
              f"rc {r.returncode} {r.stderr[-800:]}")
        check_tokens(check, label, h, rep)


def main():
    extra = [x for x in sys.argv[1:]]
    modes = []
    while "--mode" in extra:
        i = extra.index("--mode")
        modes.append(extra[i + 1])
        del extra[i:i + 2]
    sys.argv[1:] = extra
    a = live_common.parse_args(__doc__, ["ctx-run"])
    from harness import Harness  # noqa: E402 (the harness parse_args chose)
    work = a.work or tempfile.mkdtemp(prefix="ctxkit-run-live-")
    check = Checker()
    for model in a.models:
        for mode in modes or MODES:
            if mode in MODES:
                check_mode(a, Harness, os.path.join(work, model, mode), model, mode, check)
        if not modes:
            check_workflow(a, Harness, os.path.join(work, model, "workflow"), model, check)
        if not modes or "auto" in modes:
            check_auto(a, Harness, os.path.join(work, model, "auto"), model, check)
        if not modes or "budget" in modes:
            check_budget(a, Harness, os.path.join(work, model, "budget"), model, check)
    print("live run check: " + ("ok" if check.ok else "FAILED"))
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
