#!/usr/bin/python3
"""CTest check of validation/study/compare.py (the Quick start's first run), at a tiny scale.

    tests/scripts/check_compare.py --demsim build/smpi/demsim --out DIR

Runs compare.py on scenarios/default.cfg (case 1's four containers) with 8,000 particles, 40
steps and a repartition every 10, NOW, RW and RUPER, and checks: exit status 0; the printed table has
every row and every policy; RW ends with a smaller imbalance than NOW (the 1-core container
holds a quarter of the particles under NOW); a winner is printed with the time breakdown, whose
parts (summary.json's time_breakdown_s) sum to its total, the set-up plus sim_time_s plus the
closing output; the figures are PNGs that are not blank; a missing scenario file exits with 2;
compare.py and sweep.py accept every policy and partitioner `demsim keys` lists and refuse
another with 2. Exit status 0 when everything holds, else 1.
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

POLICIES = ["NOW", "RW", "RUPER"]
ROWS = ["simulated total time (s)", "lambda max (%)", "lambda final (%)", "repartitions", "gain over NOW (%)",
        "wall time (s)", "particles at the end, n1-cn6700-1"]


def breakdown_checks(out, rundir, errors):
    """A winner with its gain and the breakdown printed; each run's breakdown sums to its total."""
    if not any(line.startswith("winner: ") and "%" in line for line in out.splitlines()):
        errors.append("no 'winner: ...' line with the gain")
    if not any(line.startswith("where the time went (s)") for line in out.splitlines()):
        errors.append("no breakdown table")
    for pol in POLICIES:
        path = os.path.join(rundir, pol, "summary.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            s = json.load(f)
        b = s["time_breakdown_s"]
        parts = sum(v for k, v in b.items() if k != "total_s")
        if abs(parts - b["total_s"]) > 1e-9 * b["total_s"] or min(b.values()) < -1e-12:
            errors.append(f"{pol}: the breakdown's parts sum to {parts} s, its total is {b['total_s']} s: {b}")
        loop = b["compute_s"] + b["ghost_wait_s"] + b["ghost_comm_s"] + b["repartition_s"] + b["migration_s"] + \
            b["checkpoint_s"] + b["other_s"]
        if not (abs(b["setup_s"] - s["setup_s"]) < 1e-12 and 0 < loop < s["sim_time_s"] and s["setup_s"] > 0):
            errors.append(f"{pol}: set-up {s['setup_s']} s and the loop's parts {loop} s against sim_time_s "
                          f"{s['sim_time_s']} s")


def choice_checks(demsim, out, errors):
    """compare.py and sweep.py take every policy and partitioner of `demsim keys` and refuse others."""
    keys = subprocess.run([demsim, "keys"], stdout=subprocess.PIPE, text=True).stdout
    lists = [line.rsplit("(", 1)[1].rstrip(")").split("|") for line in keys.splitlines()
             if line.split()[:1] in (["run.policy"], ["run.partitioner"])]
    policies, partitioners = lists[0], lists[1]
    if "RUPER" not in policies or "HSFC" not in partitioners:
        errors.append(f"demsim keys lists policies {policies}, partitioners {partitioners}")
    sweep = os.path.join(STUDY, "sweep.py")
    cfg = os.path.join(TOP, "scenarios", "default.cfg")
    ok = subprocess.run([sys.executable, sweep, cfg, "--demsim", demsim, "--out", os.path.join(out, "sweep"),
                         "--slurm", os.path.join(out, "sweep.sbatch"), "--policies"] + policies + ["--partitioners"]
                        + partitioners, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if ok.returncode != 0:
        errors.append(f"sweep.py refused the solver's policies or partitioners: {ok.stdout[-500:]}")
    for script, opt in (("sweep.py", "--partitioners"), ("compare.py", "--partitioner"), ("compare.py", "--policies")):
        bad = subprocess.run([sys.executable, os.path.join(STUDY, script), cfg, "--demsim", demsim, opt, "NOPE"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if bad.returncode != 2 or "NOPE" not in bad.stdout:
            errors.append(f"{script} {opt} NOPE: exit {bad.returncode} (expected 2 naming it)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    compare = os.path.join(STUDY, "compare.py")
    cmd = [sys.executable, compare, os.path.join(TOP, "scenarios", "default.cfg"), "--out", a.out,
           "--demsim", a.demsim, "--policies"] + POLICIES + ["--", "--particles", "8000", "--steps", "40", "--repartition-every", "10"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    errors = []
    if p.returncode != 0:
        errors.append(f"compare.py exited with {p.returncode}")
    header = [line for line in p.stdout.splitlines() if line.split() == POLICIES]
    if not header:
        errors.append(f"no table header with {POLICIES}")
    for row in ROWS:
        if not any(line.startswith(row) and len(line[len(row):].split()) >= 3 for line in p.stdout.splitlines()):
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
    for png in ("compare.png", "breakdown.png"):
        problem = png_problem(os.path.join(a.out, png))
        if problem:
            errors.append(f"{png}: {problem}")
    breakdown_checks(p.stdout, a.out, errors)
    choice_checks(a.demsim, a.out, errors)
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
