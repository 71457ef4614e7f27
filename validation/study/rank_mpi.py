#!/usr/bin/python3
"""Each rank's time in its MPI calls, emulated against simulated, from comparisons already made.

    validation/study/rank_mpi.py DIR [DIR ...]

DIR: the output folder of one `validation/study/compare_real.py ... --emulate` comparison (its
runs in DIR/runs: emulated/LATTICE-POLICY-K and smpi/LATTICE-POLICY[-seedK], each with its
summary.json). For each lattice and policy, over every run of every DIR: the median of each
rank's MPI time a step beyond its wait for the slowest rank (summary.json per_rank comm_s over
the steps run, ms; solver/domain/ghosts.c says how the two are told apart), of the run's
migration time (time_breakdown_s migration_s, s), of the particles moved a repartition
(migration_particles_per_repartition) and of the migration's time per particle moved (us: the
run's migration time over its repartitions' particles), measured against predicted, as a
Markdown table on standard output. The last two tell a migration that costs more per particle
from one that moves more particles. Reads only; runs nothing. Exit status: 0, 2 when a DIR holds
no runs.
"""
import argparse
import glob
import json
import os
import statistics
import sys


def run_files(dirs, kind, case, name):
    """the file `name` of every run of LATTICE-POLICY `case` of that kind (emulated, smpi) in the DIRs"""
    pattern = f"{case}-*" if kind == "emulated" else f"{case}*"
    return [f for d in dirs for f in sorted(glob.glob(os.path.join(d, "runs", kind, pattern, name)))]


def cases_of(dirs, prog):
    """the LATTICE-POLICY cases of the DIRs' emulated runs, sorted; None (with a message) when none"""
    cases = sorted({os.path.basename(p).rsplit("-", 1)[0] for d in dirs
                    for p in glob.glob(os.path.join(d, "runs", "emulated", "*-*-*"))})
    if not cases:
        print(f"{prog}: no emulated runs in {', '.join(dirs)} (expected DIR/runs/emulated/LATTICE-POLICY-K)",
              file=sys.stderr)
        return None
    return cases


def runs(dirs, kind, case):
    found = []
    for f in run_files(dirs, kind, case, "summary.json"):
        with open(f) as fh:
            found.append(json.load(fh))
    return found


def per_particle(s):
    """the run's migration time per particle moved, us (None when it moved none)"""
    moved = s["migration_particles_per_repartition"] * s["repartitions"]
    return s["time_breakdown_s"]["migration_s"] / moved * 1e6 if moved > 0 else None


def figures(summaries):
    """(n, [rank r's MPI ms a step for each rank], [migration s, particles moved a repartition,
    us a particle moved]): medians over the runs (None where no run gives one)."""
    if not summaries:
        return 0, [], [None] * 3
    ranks = min(len(s["per_rank"]) for s in summaries)
    per = [statistics.median(s["per_rank"][r]["comm_s"] / max(1, s["steps_run"]) * 1e3 for s in summaries)
           for r in range(ranks)]
    us = [x for x in map(per_particle, summaries) if x is not None]
    return len(summaries), per, [statistics.median(s["time_breakdown_s"]["migration_s"] for s in summaries),
                                 statistics.median(s["migration_particles_per_repartition"] for s in summaries),
                                 statistics.median(us) if us else None]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    cases = cases_of(a.dirs, "rank_mpi.py")
    if not cases:
        return 2
    print("| case | runs (emulated, simulated) | MPI a step, ms: measured, by rank | predicted, by rank | "
          "migration, s: measured / predicted | particles moved a repartition | us a particle moved |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        nm, m, mm = figures(runs(a.dirs, "emulated", case))
        ns, p, pm = figures(runs(a.dirs, "smpi", case))
        fmt = lambda v: " / ".join(f"{x:.3g}" for x in v) or "-"
        both = lambda a, b, f=".3g": " / ".join("-" if v is None else format(v, f) for v in (a, b))
        print(f"| {case} | {nm}, {ns} | {fmt(m)} | {fmt(p)} | {both(mm[0], pm[0])} | {both(mm[1], pm[1], '.0f')} | "
              f"{both(mm[2], pm[2])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
