#!/usr/bin/python3
"""CTest check of validation/study/partitioners.py at the tiny scale, on a subset.

    tests/scripts/check_partitioners.py --demsim build/smpi/demsim --out DIR

Runs partitioners.py on case 1 under RW with every partitioner and checks: exit status 0;
PARTITIONERS.md has case 1's table with a row per partitioner and the answer paragraph;
partitioners.png is a PNG that is not blank; every run's summary.json names its partitioner and
holds the comparison's fields (ghosts and ghost bytes per rank per step > 0, an edge cut > 0
and below every pair, migration per repartition >= 0, partition times >= 0); and every run ends
in the same physical state whatever the partitioner (particles.h5: ids, positions and velocities
to 1e-9 relative, kinetic energy), since the parallel run equals the serial one. Then the RCB
run equals one of the scenario without run.partitioner (the default) bit for bit but for the
wall-clock fields, and a bad partitioner exits with 2 (demsim, naming the key; the script's
own argument check). Exit status 0 when everything holds, else 1.
"""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(TOP, "validation", "study")  # the study scripts (validation/study/)
sys.path.insert(0, HERE)
import checking  # noqa: E402
from checking import report_problems  # noqa: E402

PARTITIONERS = ["RCB", "RIB", "HSFC", "PHG", "GRAPH"]
SCENARIO, POLICY = "case1", "RW"
FIELDS = ["ghosts_per_rank_per_step", "ghost_bytes_per_rank_per_step", "ghost_bytes_per_rank_per_step_max",
          "edge_cut", "edge_cut_fraction", "migration_particles_per_repartition", "migration_bytes_per_repartition",
          "partition_s", "migration_s", "wall_partition_s"]


def final_state(path):
    """ids, positions and velocities of the last frame, sorted by id."""
    with h5py.File(path, "r") as f:
        g = f[sorted(k for k in f.keys() if k.startswith("Step"))[-1]]
        ids, pos, vel = (np.asarray(g[k]) for k in ("ParticleIDs", "Coordinates", "Velocities"))
    order = np.argsort(ids)
    return ids[order], pos[order], vel[order]


def check_runs(out, errors):
    ref = None
    for x in PARTITIONERS:
        d = os.path.join(out, f"{SCENARIO}-{POLICY}-{x}")
        path = os.path.join(d, "summary.json")
        if not os.path.exists(path):
            errors.append(f"{path}: missing")
            continue
        with open(path) as f:
            s = json.load(f)
        if s.get("partitioner") != x:
            errors.append(f"{path}: partitioner {s.get('partitioner')!r}, expected {x!r}")
        bad = [k for k in FIELDS if not isinstance(s.get(k), (int, float)) or s[k] < 0]
        if bad:
            errors.append(f"{path}: missing or negative {', '.join(bad)}")
            continue
        if not (s["ghosts_per_rank_per_step"] > 0 and s["ghost_bytes_per_rank_per_step"] > 0 and s["edge_cut"] > 0
                and 0 < s["edge_cut_fraction"] < 1):
            errors.append(f"{path}: no ghosts or no cut: {[s[k] for k in FIELDS]}")
        if s["ghost_bytes_per_rank_per_step_max"] < s["ghost_bytes_per_rank_per_step"]:
            errors.append(f"{path}: the busiest rank's ghost bytes below the mean")
        state = final_state(os.path.join(d, "particles.h5"))
        if ref is None:
            ref = (x, state, s["kinetic_energy_end_J"])
            continue
        ids0, pos0, vel0 = ref[1]
        ids, pos, vel = state
        if not np.array_equal(ids0, ids):
            errors.append(f"{x}: not the same particles as {ref[0]}")
            continue
        dx = np.max(np.abs(pos - pos0)) / max(np.max(np.abs(pos0)), 1e-300)
        dv = np.max(np.abs(vel - vel0)) / max(np.max(np.abs(vel0)), 1e-300)
        dke = abs(s["kinetic_energy_end_J"] - ref[2]) / abs(ref[2])
        print(f"{x}: final state against {ref[0]}: positions {dx:.2e}, velocities {dv:.2e}, kinetic energy {dke:.2e}")
        if dx > 1e-9 or dv > 1e-9 or dke > 1e-9:
            errors.append(f"{x}: final state differs from {ref[0]} (x {dx:.2e}, v {dv:.2e}, ke {dke:.2e})")


def check_report(out, errors):
    errors += report_problems(out, "PARTITIONERS.md", "partitioners.png", f"### {SCENARIO}",
                              [f"| {POLICY} | {x} | " for x in PARTITIONERS],
                              ["## Does a graph or hypergraph partitioner beat RCB?", "Answer: "])


def run_demsim(demsim, out, name, args):
    d = os.path.join(out, name)
    cmd = [demsim, "run", os.path.join(TOP, "scenarios", "case1.cfg"), "--particles", "20000", "--steps", "60",
           "--repartition-every", "10", "--policy", POLICY, "--out", d, "--quiet"] + args
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), d


def check_default_is_rcb(demsim, out, errors):
    r, d = run_demsim(demsim, out, "default", [])
    if r.returncode != 0:
        errors.append(f"the default run: exit {r.returncode}\n{r.stdout}")
        return
    with open(os.path.join(d, "summary.json")) as f:
        a = json.load(f)
    with open(os.path.join(out, f"{SCENARIO}-{POLICY}-RCB", "summary.json")) as f:
        b = json.load(f)
    diff = sorted(k for k in set(a) | set(b) if not k.startswith("wall") and k != "scenario_file" and a.get(k) != b.get(k))
    if diff:
        errors.append(f"the default partitioner's run differs from RCB's in {', '.join(diff)}")


def check_bad(demsim, out, errors):
    r, _ = run_demsim(demsim, out, "bad", ["--set", "run.partitioner=METIS"])
    if r.returncode != 2 or "run.partitioner" not in r.stdout:
        errors.append(f"run.partitioner=METIS: exit {r.returncode}, expected 2 naming the key: {r.stdout}")
    p = subprocess.run([sys.executable, os.path.join(STUDY, "partitioners.py"), "--out", out, "--demsim", demsim,
                        "--partitioners", "METIS"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 2:
        errors.append(f"partitioners.py --partitioners METIS: exit {p.returncode}, expected 2")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    cmd = [sys.executable, os.path.join(STUDY, "partitioners.py"), "--scale", "tiny", "--out", a.out, "--demsim",
           a.demsim, "-j", "2", "--scenarios", SCENARIO, "--policies", POLICY]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    errors = []
    if p.returncode != 0:
        errors.append(f"partitioners.py exited with {p.returncode}")
    check_runs(a.out, errors)
    check_report(a.out, errors)
    check_default_is_rcb(a.demsim, a.out, errors)
    check_bad(a.demsim, a.out, errors)
    return checking.verdict("check_partitioners.py", errors)


if __name__ == "__main__":
    sys.exit(main())
