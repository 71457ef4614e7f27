#!/usr/bin/python3
"""CTest check of validation/study/ruper.py at the tiny scale.

    tests/scripts/check_ruper.py --demsim build/smpi/demsim --out DIR

Runs ruper.py on case 1 and case 2 under NOW, RW and RUPER, without noise (--no-noise: the
deterministic model), and checks: exit status 0; RUPER.md
has a table per scenario with a row per policy and the paragraph computed from them; ruper.png
is a PNG that is not blank; every RUPER run's summary.json names its policy and counts speed
reports (at least one per rank), and RUPER repartitions no more often than RW; on case 1 (four
containers about 1.8 x apart) RUPER balances in exactly one repartition and is faster than RW;
the other policies report no speed reports. Then an unknown scenario exits with 2 and a bad
RUPER key (run.ruper_change = 1) with 2 naming the key. Exit status 0 when everything holds,
else 1.
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
import checking  # noqa: E402
from checking import png_problem  # noqa: E402

SCENARIOS = ["case1", "case2"]
POLICIES = ["NOW", "RW", "RUPER"]


def summary(out, s, p, errors):
    path = os.path.join(out, f"{s}-{p}", "summary.json")
    if not os.path.exists(path):
        errors.append(f"{path}: missing")
        return None
    with open(path) as f:
        d = json.load(f)
    if d.get("policy") != p:
        errors.append(f"{path}: policy {d.get('policy')!r}, expected {p!r}")
    return d


def check_runs(out, errors):
    for s in SCENARIOS:
        runs = {p: summary(out, s, p, errors) for p in POLICIES}
        if any(r is None for r in runs.values()):
            continue
        ruper, rw = runs["RUPER"], runs["RW"]
        if ruper.get("speed_reports", 0) < ruper["ranks"]:
            errors.append(f"{s} RUPER: {ruper.get('speed_reports')} speed reports for {ruper['ranks']} ranks")
        for p in ("NOW", "RW"):
            if runs[p].get("speed_reports") != 0:
                errors.append(f"{s} {p}: speed_reports {runs[p].get('speed_reports')!r}, expected 0")
        if ruper["repartitions"] > rw["repartitions"]:
            errors.append(f"{s}: RUPER repartitioned {ruper['repartitions']} times, RW {rw['repartitions']}")
        osc = ruper.get("weight_oscillation")
        if not isinstance(osc, (int, float)) or osc < 0:
            errors.append(f"{s} RUPER: weight_oscillation {osc!r}")
        if s == "case1":
            if ruper["repartitions"] != 1:
                errors.append(f"case1 RUPER: {ruper['repartitions']} repartitions, expected 1")
            if not ruper["sim_time_s"] < rw["sim_time_s"]:
                errors.append(f"case1: RUPER {ruper['sim_time_s']} s, not faster than RW {rw['sim_time_s']} s")
            w = [r["weight"] for r in ruper["per_rank"]]
            if not w[0] < w[-1]:
                errors.append(f"case1 RUPER: weights {w}: CN-6700-1 should get less than CN-6700-4")


def check_report(out, errors):
    path = os.path.join(out, "RUPER.md")
    if not os.path.exists(path):
        errors.append(f"{path}: missing")
        return
    text = open(path).read()
    for s in SCENARIOS:
        if f"### {s}" not in text:
            errors.append(f"{path}: no table for {s}")
    for p in POLICIES:
        if sum(line.startswith(f"| {p} | ") and "failed" not in line for line in text.splitlines()) != len(SCENARIOS):
            errors.append(f"{path}: not one row for {p} per scenario")
    if "## What the figures say" not in text or "Against RW: RUPER faster on" not in text:
        errors.append(f"{path}: no paragraph computed from the figures")
    problem = png_problem(os.path.join(out, "ruper.png"))
    if problem:
        errors.append(f"ruper.png: {problem}")


def check_bad_input(demsim, out, script, errors):
    bad = subprocess.run([sys.executable, script, "--out", out, "--demsim", demsim, "--scenarios", "nosuch"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if bad.returncode != 2:
        errors.append(f"an unknown scenario: exit {bad.returncode}, expected 2")
    cmd = [demsim, "run", os.path.join(TOP, "scenarios", "case1.cfg"), "--policy", "RUPER", "--set",
           "run.ruper_change=1", "--out", os.path.join(out, "bad"), "--quiet"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 2 or "run.ruper_change" not in r.stdout:
        errors.append(f"run.ruper_change = 1: exit {r.returncode}, expected 2 naming the key\n{r.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    script = os.path.join(STUDY, "ruper.py")
    cmd = [sys.executable, script, "--scale", "tiny", "--out", a.out, "--demsim", a.demsim, "-j", "2",
           "--no-noise", "--scenarios"] + SCENARIOS + ["--policies"] + POLICIES
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    errors = []
    if p.returncode != 0:
        errors.append(f"ruper.py exited with {p.returncode}")
    check_runs(a.out, errors)
    check_report(a.out, errors)
    check_bad_input(a.demsim, a.out, script, errors)
    return checking.verdict("check_ruper.py", errors)


if __name__ == "__main__":
    sys.exit(main())
