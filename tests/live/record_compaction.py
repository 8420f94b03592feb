#!/usr/bin/env python3
"""Finds where the real Claude Code client compacts, for each setting that moves or switches off
auto-compaction, and records what it found as fixtures (tests/fixtures/claude-code-<version>/
compaction/<case>.json) that the unit tests of context/compaction_point check the rules against.

    record_compaction.py [--out DIR] [--only CASE,...]      # the client: $CLAUDE_BIN or install_client.sh

Each case runs `claude -p` once against the fake API: a scripted turn of Bash calls whose replies
report usage at rising shares of the window ("fills", % of "window"), with the case's environment
or settings. The window is the one this client gives the model: a first call reads it from the
result's modelUsage (contextWindow), so claude-opus-4-8 has 200,000 on 2.1.197 and 1,000,000 on
2.1.332. Recorded: which requests the client made ("main", or "compact" for a compaction), the
fill of the reply after which each compaction came, and the threshold and effective window the
client's debug log names. Takes about 20 s a case.
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

FILLS = [20, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95]
CASES = {
    # name: (model, window (None: the client's own), env, settings)
    "default": ("claude-sonnet-4-5", 200000, {}, {}),
    "window_env_100k": ("claude-sonnet-4-5", 200000, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}, {}),
    "window_env_50k": ("claude-sonnet-4-5", 200000, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "50000"}, {}),
    "window_env_300k": ("claude-sonnet-4-5", 200000, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000"}, {}),
    "window_setting_100k": ("claude-sonnet-4-5", 200000, {}, {"autoCompactWindow": 100000}),
    "pct_50": ("claude-sonnet-4-5", 200000, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, {}),
    "window_100k_pct_50": ("claude-sonnet-4-5", 200000,
                           {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, {}),
    "window_100k_pct_90": ("claude-sonnet-4-5", 200000,
                           {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "90"}, {}),
    "window_100k_disable_auto": ("claude-sonnet-4-5", 200000,
                                 {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "DISABLE_AUTO_COMPACT": "1"}, {}),
    "window_100k_disable_compact": ("claude-sonnet-4-5", 200000,
                                    {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "DISABLE_COMPACT": "1"}, {}),
    "max_context_100k": ("claude-sonnet-4-5", 200000, {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "100000"}, {}),
    "opus_default": ("claude-opus-4-8", None, {}, {}),
    "opus_window_500k": ("claude-opus-4-8", None, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "500000"}, {}),
    # Per model, no setting (share/client-rules.json): a model with a default threshold, a native-1M
    # one, a reactive one, an id the client does not know, and a per-model window in the settings.
    "sonnet46_default": ("claude-sonnet-4-6", None, {}, {}),
    "sonnet5_default": ("claude-sonnet-5", None, {}, {}),
    "haiku45_default": ("claude-haiku-4-5", None, {}, {}),
    "unknown_model_default": ("claude-mystery-9", None, {}, {}),
    "sonnet46_model_settings_120k": ("claude-sonnet-4-6", None, {},
                                     {"modelSettings": {"claude-sonnet-4-6": {"autoCompactWindow": 120000}}}),
}


def client_window(root, model):
    """The window the client reports for `model` (modelUsage.<model>.contextWindow of a result)."""
    h = Harness(os.path.join(root, "probe-" + model))
    h.write_settings(events=[], record=False)
    h.start_server({"turns": [{"text": "hi"}]})
    try:
        r = h.claude("hi", args=["--model", model])
    finally:
        h.stop_server()
    for line in r.stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("type") == "result":
            for usage in (ev.get("modelUsage") or {}).values():
                if isinstance(usage, dict) and usage.get("contextWindow"):
                    return int(usage["contextWindow"])
    sys.exit("record_compaction: the client reported no contextWindow for " + model)


def run_case(root, name, model, window, env, settings):
    h = Harness(os.path.join(root, name))
    h.write_settings(events=["PreCompact"], record=True, extra=settings)
    turns = [{"tool": "Bash", "input": {"command": "echo step%d" % i}, "fill_pct": f} for i, f in enumerate(FILLS)]
    turns.append({"text": "Done.", "fill_pct": FILLS[-1]})
    h.start_server({"turns": turns, "context_window": window, "compact_text": "<summary>S</summary>"})
    debug = os.path.join(h.root, "debug.log")
    try:
        r = h.claude("go", args=["--model", model], env=env, debug_file=debug)
    finally:
        h.stop_server()
    kinds = [q.get("kind") for q in h.requests() if q.get("kind") in ("main", "compact")]
    # The fill the client had last been told before each compaction request.
    compact_after = []
    main_seen = 0
    for k in kinds:
        if k == "main":
            main_seen += 1
        elif main_seen:
            compact_after.append(FILLS[min(main_seen, len(FILLS)) - 1])
    text = open(debug, encoding="utf-8", errors="replace").read() if os.path.exists(debug) else ""
    thresholds = sorted({int(m) for m in re.findall(r"threshold (\d+)", text)})
    windows = sorted({int(m) for m in re.findall(r"effectiveWindow=(\d+)", text)})
    return {"case": name, "model": model, "window": window, "env": env, "settings": settings, "fills": FILLS,
            "rc": r.rc, "requests": kinds, "compactions": len(compact_after), "compact_after_fill": compact_after,
            "client_thresholds": thresholds, "client_effective_windows": windows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="default: tests/fixtures/claude-code-<client version>/compaction")
    ap.add_argument("--only", help="comma-separated case names")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="ctxkit-compaction-")
    h = Harness(os.path.join(root, "version"))
    version = subprocess.run([h.claude_bin, "--version"], env=h.env(), capture_output=True, text=True).stdout.split()[0]
    out = a.out or os.path.join(HERE, "..", "fixtures", "claude-code-" + version, "compaction")
    os.makedirs(out, exist_ok=True)
    names = a.only.split(",") if a.only else list(CASES)
    for name in names:
        model, window, env, settings = CASES[name]
        window = window or client_window(root, model)
        rec = run_case(root, name, model, window, env, settings)
        rec["client_version"] = version
        with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")
        print("%-28s compactions=%d after fill %s thresholds=%s windows=%s" % (
            name, rec["compactions"], rec["compact_after_fill"], rec["client_thresholds"], rec["client_effective_windows"]))
    subprocess.run(["rm", "-rf", root])


if __name__ == "__main__":
    main()
