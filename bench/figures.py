#!/usr/bin/env python3
"""The benchmark's memory: figures of this run beside the recorded ones.

Each benchmark run by bench/run.sh appends its figures to the file named by
$CTXKIT_BENCH_FIGURES, one a line, tab-separated:

    name  value  noise  target

  name    what is measured, e.g. remind.transcript.100mb (one word, no tabs)
  value   a ratio (or a percentage of a floor's throughput, or a size in MB): never an absolute
          time, which changes with the machine; a ratio of two processes measured in the same run
          does not change much
  noise   the spread the run itself measured for that value: the value computed over consecutive
          blocks of the repetitions, 1.4826 x the median absolute deviation of those (robust to
          one block disturbed by other work on the machine)
  target  "<=X" or ">=X": the bound the figure must keep; it also says which way is worse

  figures.py compare RECORDED NEW [--record]

prints every figure of NEW beside RECORDED's, marks a target missed, and flags a figure that got
worse than the recorded one by more than the noise (the larger of the two runs' noise, and at
least 2 % of the recorded value: a change inside what the run measured as its own spread is not a
change). With --record, NEW's figures
replace RECORDED's of the same name (the others are kept, so a subset run records its subset).
Exit status: 1 when a target is missed or a figure regressed, else 0.
"""
import os
import sys

HEADER = "# figure\tvalue\tnoise\ttarget\n"


def read_conditions(path):
    """The `# recorded:` lines of a recorded file: when and how its figures were taken."""
    try:
        with open(path) as f:
            return [line[len("# recorded: "):].rstrip("\n") for line in f if line.startswith("# recorded: ")]
    except FileNotFoundError:
        return []


def read(path):
    figures = {}
    try:
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 4:
                    print(f"{path}: ignored a malformed line: {line.rstrip()}", file=sys.stderr)
                    continue
                name, value, noise, target = parts
                figures[name] = (float(value), float(noise), target)
    except FileNotFoundError:
        pass
    return figures


def meets(value, target):
    bound = float(target[2:])
    return value <= bound if target.startswith("<=") else value >= bound


def worse_by(value, recorded, target):
    """How much worse `value` is than `recorded` (positive: worse)."""
    return value - recorded if target.startswith("<=") else recorded - value


def write(path, figures, conditions):
    with open(path + ".tmp", "w") as f:
        f.write("# Recorded by bench/run.sh --record (bench/figures.py describes the columns).\n")
        for c in conditions:
            f.write(f"# recorded: {c}\n")
        f.write(HEADER)
        for name in sorted(figures):
            value, noise, target = figures[name]
            f.write(f"{name}\t{value:.3f}\t{noise:.3f}\t{target}\n")
    os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) < 4 or argv[1] != "compare":
        print("usage: figures.py compare RECORDED NEW [--record]", file=sys.stderr)
        return 2
    recorded_path, new_path = argv[2], argv[3]
    record = "--record" in argv[4:]
    recorded = read(recorded_path)
    new = read(new_path)
    if not new:
        print("figures: this run gave none")
        return 0
    bad = False
    width = max(len(n) for n in new)
    print(f"\n{'figure':<{width}}  {'now':>9} {'±noise':>7}  {'recorded':>9} {'±noise':>7}  {'target':>8}  verdict")
    for name, (value, noise, target) in new.items():
        verdict = []
        if not meets(value, target):
            verdict.append("TARGET MISSED")
            bad = True
        if name in recorded:
            rv, rn, _ = recorded[name]
            d = worse_by(value, rv, target)
            allowed = max(noise, rn, 0.02 * abs(rv))
            if d > allowed:
                verdict.append(f"WORSE by {d:.3f} (more than the noise)")
                bad = True
            elif d < -allowed:
                verdict.append("better")
            else:
                verdict.append("same within the noise")
            rec = f"{rv:>9.3f} {rn:>7.3f}"
        else:
            verdict.append("not recorded yet")
            rec = f"{'-':>9} {'-':>7}"
        print(f"{name:<{width}}  {value:>9.3f} {noise:>7.3f}  {rec}  {target:>8}  {'; '.join(verdict)}")
    if record:
        merged = dict(recorded)
        merged.update(new)
        conditions = read_conditions(recorded_path)
        if os.environ.get("CTXKIT_BENCH_CONDITIONS"):
            conditions = (conditions + [os.environ["CTXKIT_BENCH_CONDITIONS"]])[-4:]
        write(recorded_path, merged, conditions)
        print(f"recorded {len(new)} figures in {recorded_path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
