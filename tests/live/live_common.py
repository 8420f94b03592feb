"""Command line shared by the live checks:

    check_*.py [BIN_DIR] [--model M]... [--work DIR] [--harness DIR]

BIN_DIR holds the built programs (default: build/hooks of the source tree). The checks drive the
harness of this folder (harness.py, cc_run.py, fake_api.py); --harness names another folder with the
same two entry points (the older form `check_*.py HARNESS_DIR BIN_DIR` means the same). Without
--model each check runs for both models below.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
MODELS = ["claude-sonnet-4-5", "claude-opus-4-8"]


def parse_args(doc, programs, extra=None):
    """The parsed command line: bin_dir and harness (absolute), models, work (and what extra, called
    with the parser, adds). Exits with one line when BIN_DIR lacks one of programs."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", metavar="BIN_DIR", help="built programs (default: build/hooks)")
    ap.add_argument("--harness", help="another harness folder with harness.py and cc_run.py")
    ap.add_argument("--model", action="append", help="model to check (repeatable; default: both)")
    ap.add_argument("--work", help="work folder (default: a new one under the temporary folder)")
    if extra:
        extra(ap)
    a = ap.parse_args()
    if len(a.dirs) > 2:
        ap.error("expected at most [HARNESS_DIR] BIN_DIR")
    if len(a.dirs) == 2:
        a.harness = a.harness or a.dirs[0]
    a.bin_dir = os.path.abspath(a.dirs[-1] if a.dirs else os.path.join(SOURCE, "build", "hooks"))
    a.harness = os.path.abspath(a.harness or HERE)
    a.models = a.model or MODELS
    missing = [p for p in programs if not os.access(os.path.join(a.bin_dir, p), os.X_OK)]
    if missing:
        ap.error(f"{os.path.join(a.bin_dir, missing[0])}: no such program (build it first)")
    sys.path.insert(0, a.harness)
    if a.harness == HERE:
        import harness
        harness.claude_bin()  # installs the client once, here, rather than in every cc_run.py
    return a


def cc_run_argv(a):
    """The start of a cc_run.py command line for the chosen harness."""
    return [sys.executable, os.path.join(a.harness, "cc_run.py")]


def short_tokens(n):
    """ctx-status's short form of a token count (context_meter.cpp short_tokens)."""
    if n >= 1000000 and n % 1000000 == 0:
        return f"{n // 1000000}M"
    if n >= 10000:
        return f"{n // 1000 + (1 if n % 1000 >= 500 else 0)}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def run_models(a, run_model, name, prefix):
    """Runs run_model(Harness, bin_dir, work, model) for each model of the command line, each in a
    folder of its own under --work (else a new temporary one), prints every (ok, what, detail) it
    returns, then "<name> live check passed" or "... FAILED". Returns the exit code."""
    import tempfile
    from harness import Harness  # noqa: E402 (the harness parse_args chose)
    work = a.work or tempfile.mkdtemp(prefix=prefix)
    ok = True
    for model in a.models:
        for good, what, detail in run_model(Harness, a.bin_dir, os.path.join(work, model), model):
            print(f"{'ok  ' if good else 'FAIL'} {model}: {what}" + (f": {detail}" if detail else ""))
            ok = ok and good
    print(f"{name} live check passed" if ok else f"{name} live check FAILED")
    return 0 if ok else 1
