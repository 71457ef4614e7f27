#!/usr/bin/python3
"""How much the two ranks' speeds wander against each other, emulated against simulated, from
comparisons already made: the variation RW's weights follow.

    validation/study/rank_speed.py DIR [DIR ...]

DIR: the output folder of one `validation/study/compare_real.py ... --emulate` comparison of a
two-rank scenario (its runs in DIR/runs: emulated/LATTICE-POLICY-K and smpi/LATTICE-POLICY[-seedK],
each with its metrics.csv). In each run, for each metrics row after the first (a window of
output.metrics_every steps) that is not a repartition's: each rank's speed (its particles over its
load_s, the DEM computing of the window) and the log of rank 0's over rank 1's. Per run: the
standard deviation of that log over the windows (how far the ratio wanders from window to window)
and its mean's size (a lasting difference between the ranks). For each lattice and policy, over
every run of every DIR: the medians, emulated against simulated, as a Markdown table on standard
output. The simulated wandering is the noise model's (scenario key noise, scenarios/README.md);
the emulated is the host's. Reads only; runs nothing. Exit status: 0, 2 when a DIR holds no runs.
"""
import argparse
import csv
import math
import statistics
import sys

from rank_mpi import cases_of, run_files


def wander(path):
    """(sd, |mean|) of log(speed 0 / speed 1) over the run's windows, or None (fewer than three)"""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    steps = {}
    for r in rows:
        steps.setdefault(int(r["step"]), {})[int(r["rank"])] = r
    logs = []
    for step in sorted(steps)[1:]:
        w = steps[step]
        if len(w) != 2 or any(int(w[k]["repartitioned"]) for k in w) or min(float(w[k]["load_s"]) for k in w) <= 0:
            continue
        speed = [float(w[k]["particles"]) / float(w[k]["load_s"]) for k in (0, 1)]
        logs.append(math.log(speed[0] / speed[1]))
    return (statistics.pstdev(logs), abs(statistics.mean(logs))) if len(logs) >= 3 else None


def figures(dirs, kind, case):
    got = [wander(f) for f in run_files(dirs, kind, case, "metrics.csv")]
    got = [g for g in got if g]
    if not got:
        return 0, "-", "-"
    return len(got), f"{statistics.median(g[0] for g in got):.3f}", f"{statistics.median(g[1] for g in got):.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    cases = cases_of(a.dirs, "rank_speed.py")
    if not cases:
        return 2
    print("| case | runs (emulated, simulated) | sd of log(speed 0 / speed 1) a window: measured | predicted | "
          "its mean's size: measured | predicted |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        ne, se, me = figures(a.dirs, "emulated", case)
        ns, ss, ms = figures(a.dirs, "smpi", case)
        print(f"| {case} | {ne}, {ns} | {se} | {ss} | {me} | {ms} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
