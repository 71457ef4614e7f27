#!/usr/bin/python3
"""CTest check of validation/study/damping.py at the tiny scale, on a subset.

    tests/scripts/check_damping.py --demsim build/smpi/demsim --out DIR

Runs damping.py on one spiky scenario (spiky-p2-d50) under RW, EWMA and PI and checks: exit
status 0; DAMPING.md has the scenario's table with a row per policy and the "which policy when"
paragraph; damping.png is a PNG that is not blank; every run's summary.json names its policy
and holds weight_oscillation (a number >= 0) and lambda_after_repartition_percent (one entry
per repartition but the last, whose interval ends with the run); the RW policy of the scenario
file is overridden. Then two runs that must equal RW's bit for bit (PI with Kp = 1, Ki = 0;
RW5 with a 0 % dead band) on case 1 at 20,000 particles; and an unknown scenario exits with 2. Exit status 0 when everything holds, else 1.
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
from checking import report_problems  # noqa: E402

POLICIES = ["RW", "EWMA", "PI"]
SCENARIO = "spiky-p2-d50"


def check_runs(out, errors):
    for p in POLICIES:
        path = os.path.join(out, f"{SCENARIO}-{p}", "summary.json")
        if not os.path.exists(path):
            errors.append(f"{path}: missing")
            continue
        with open(path) as f:
            s = json.load(f)
        if s.get("policy") != p:
            errors.append(f"{path}: policy {s.get('policy')!r}, expected {p!r}")
        osc = s.get("weight_oscillation")
        if not isinstance(osc, (int, float)) or osc < 0:
            errors.append(f"{path}: weight_oscillation {osc!r}")
        after = s.get("lambda_after_repartition_percent")
        if not isinstance(after, list) or len(after) != s.get("repartitions", 0) - 1 or \
                not all(isinstance(x, (int, float)) and x >= 0 for x in after):
            errors.append(f"{path}: lambda_after_repartition_percent {after!r} for {s.get('repartitions')} repartitions")


def check_report(out, errors):
    errors += report_problems(out, "DAMPING.md", "damping.png", f"### {SCENARIO}", [f"| {p} | " for p in POLICIES],
                              ["## Which policy when", "Fastest policy per scenario"])


# Runs that must equal RW bit for bit (case 1, 20,000 particles, 60 steps, a repartition every
# 10): PI with Kp = 1, Ki = 0 is RW's step, and RW5 with a 0 % dead band updates whenever RW
# does. Equal summaries (but the wall-clock fields) show that the policies share the run's
# arithmetic, independently of the cost model's figures.
SAME_AS_RW = {"PI-kp1-ki0": ["--policy", "PI", "--set", "run.pi_kp=1", "--set", "run.pi_ki=0"],
              "RW5-band0": ["--policy", "RW5", "--set", "run.rw5_threshold=0"]}


def run_case1(demsim, out, name, args, errors):
    d = os.path.join(out, f"same-{name}")
    cmd = [demsim, "run", os.path.join(TOP, "scenarios", "case1.cfg"), "--particles", "20000", "--steps", "60",
           "--repartition-every", "10", "--out", d, "--quiet"] + args
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        errors.append(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}")
        return None
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    return {k: v for k, v in s.items() if not k.startswith("wall") and k not in ("policy", "scenario_file")}


def check_same_as_rw(demsim, out, errors):
    rw = run_case1(demsim, out, "RW", ["--policy", "RW"], errors)
    for name, args in SAME_AS_RW.items():
        other = run_case1(demsim, out, name, args, errors)
        if rw is None or other is None:
            continue
        diff = sorted(k for k in set(rw) | set(other) if rw.get(k) != other.get(k))
        print(f"{name}: sim_time_s {other['sim_time_s']!r} (RW {rw['sim_time_s']!r})")
        if diff:
            errors.append(f"{name} differs from RW in {', '.join(diff)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    script = os.path.join(STUDY, "damping.py")
    cmd = [sys.executable, script, "--scale", "tiny", "--out", a.out, "--demsim", a.demsim, "-j", "2",
           "--scenarios", SCENARIO, "--policies"] + POLICIES
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    errors = []
    if p.returncode != 0:
        errors.append(f"damping.py exited with {p.returncode}")
    check_runs(a.out, errors)
    check_report(a.out, errors)
    check_same_as_rw(a.demsim, a.out, errors)
    bad = subprocess.run([sys.executable, script, "--out", a.out, "--demsim", a.demsim, "--scenarios", "nosuch"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if bad.returncode != 2:
        errors.append(f"an unknown scenario: exit {bad.returncode}, expected 2")
    return checking.verdict("check_damping.py", errors)


if __name__ == "__main__":
    sys.exit(main())
