#!/usr/bin/python3
"""CTest check of validation/study/compare.py (the Quick start's first run), at a tiny scale.

    tests/scripts/check_compare.py --demsim build/smpi/demsim --out DIR

Runs compare.py on scenarios/default.cfg (case 1's four containers) with 8,000 particles, 40
steps and a repartition every 10, NOW and RW, and checks: exit status 0; the printed table has
every row and both policies; RW ends with a smaller imbalance than NOW (the 1-core container
holds a quarter of the particles under NOW); the figure is a PNG that is not blank; and a
missing scenario file exits with 2. Exit status 0 when everything holds, else 1.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(TOP, "validation", "study")  # the study scripts (validation/study/)
sys.path.insert(0, HERE)
from checking import png_problem  # noqa: E402

ROWS = ["simulated total time (s)", "lambda max (%)", "lambda final (%)", "repartitions", "gain over NOW (%)",
        "wall time (s)", "particles at the end, n1-cn6700-1"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    compare = os.path.join(STUDY, "compare.py")
    cmd = [sys.executable, compare, os.path.join(TOP, "scenarios", "default.cfg"), "--out", a.out,
           "--demsim", a.demsim, "--", "--particles", "8000", "--steps", "40", "--repartition-every", "10"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    errors = []
    if p.returncode != 0:
        errors.append(f"compare.py exited with {p.returncode}")
    header = [line for line in p.stdout.splitlines() if line.split() == ["NOW", "RW"]]
    if not header:
        errors.append("no table header with NOW and RW")
    for row in ROWS:
        if not any(line.startswith(row) and len(line[len(row):].split()) >= 2 for line in p.stdout.splitlines()):
            errors.append(f"table row missing or incomplete: {row}")
    lam = {}
    for pol in ("NOW", "RW"):
        path = os.path.join(a.out, pol, "summary.json")
        if os.path.exists(path):
            with open(path) as f:
                lam[pol] = json.load(f)["lambda_final_percent"]
        else:
            errors.append(f"{path} not written")
    if len(lam) == 2 and not lam["RW"] < 0.5 * lam["NOW"]:
        errors.append(f"RW did not reduce the imbalance: final lambda NOW {lam['NOW']:.1f} %, RW {lam['RW']:.1f} %")
    problem = png_problem(os.path.join(a.out, "compare.png"))
    if problem:
        errors.append(f"compare.png: {problem}")
    if not any(line.startswith("figure: ") and line.endswith("compare.png") for line in p.stdout.splitlines()):
        errors.append("the figure's path is not printed")
    bad = subprocess.run([sys.executable, compare, os.path.join(a.out, "no-such.cfg"), "--demsim", a.demsim],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if bad.returncode != 2 or "no-such.cfg" not in bad.stdout:
        errors.append(f"a missing scenario: exit {bad.returncode}, output {bad.stdout!r} (expected 2 and the name)")
    for e in errors:
        print("FAIL:", e)
    print("check_compare: " + ("ok" if not errors else f"{len(errors)} failure(s)"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
