#!/usr/bin/python3
"""CTest check of a container lost mid-run (failure.*, scenarios/README.md), at a tiny scale.

    tests/scripts/check_failure.py --demsim build/smpi/demsim --out DIR [--native]

Case 1 at 4,000 particles, checkpoints every 10 steps. A run that loses n3-cn6700-3 (SMPI: at
0.12 s simulated, mid-run; native: 2 ranks under mpirun, n2-cn6700-2a at 0.3 s of wall time)
must: exit 0; reach the last step with every particle; run its end on one rank fewer, without
the lost container; report one loss, lost time > 0 and a total equal to the sum of its parts;
and end in the state of the run without the loss (positions within 1e-9 m: the decomposition
differs, so the sums do too). SMPI only: losses drawn from failure.mtbf are the same twice with
the same seed and the last restart begins from the last loss's checkpoint; a loss after the end
of the run changes nothing; on a platform without storage_bw the first checkpoint stops the run
naming it.
Exit status 0 when everything holds, else 1.
"""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SCENARIO = os.path.join(TOP, "scenarios", "case1.cfg")


def run(demsim, out, name, extra):
    rundir = os.path.join(out, name)
    cmd = [demsim, "run", SCENARIO, "--particles", "4000", "--repartition-every", "20", "--quiet",
           "--set", "output.checkpoint_every=10", "--out", rundir] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    summary = None
    if p.returncode == 0 and os.path.exists(os.path.join(rundir, "summary.json")):
        with open(os.path.join(rundir, "summary.json")) as f:
            summary = json.load(f)
    return p, summary, rundir


def final_positions(rundir):
    with h5py.File(os.path.join(rundir, "particles.h5"), "r") as h:
        g = h[sorted(h.keys())[-1]]
        ids = np.asarray(g["ParticleIDs"])
        pos = np.asarray(g["Coordinates"])
    return pos[np.argsort(ids)]


def check_loss(s, steps, ranks, lost, errors, what):
    if s is None:
        errors.append(f"{what}: the run did not finish")
        return
    if s["steps"] != steps or s["particles_end"] != s["particles"]:
        errors.append(f"{what}: step {s['steps']} of {steps}, {s['particles_end']} of {s['particles']} particles")
    if s["ranks"] != ranks or any(r["host"] == lost for r in s["per_rank"]):
        errors.append(f"{what}: ended on {s['ranks']} ranks ({[r['host'] for r in s['per_rank']]}), expected {ranks} "
                      f"without {lost}")
    f = s.get("failure")
    if not f or len(f["losses"]) != 1 or f["losses"][0]["host"] != lost:
        errors.append(f"{what}: expected one loss of {lost}, got {f and f['losses']}")
        return
    parts = f["setup_s"] + f["kept_s"] + f["recompute_s"] + f["restart_latency_s"] + f["restart_setup_s"]
    if not f["lost_s"] > 0 or abs(parts - f["total_s"]) > 1e-9 * f["total_s"]:
        errors.append(f"{what}: lost {f['lost_s']} s (expected > 0), total {f['total_s']} s against the sum of its "
                      f"parts {parts} s")
    if abs(f["lost_s"] - f["recompute_s"] - f["restart_latency_s"] - f["restart_setup_s"]) > 1e-9 * f["total_s"]:
        errors.append(f"{what}: lost_s is not recompute + restart latency + restart set-up")
    if not (f["checkpoints"] > 0 and f["checkpoint_cost_s"] > 0):
        errors.append(f"{what}: no checkpoint cost ({f['checkpoints']} checkpoints, {f['checkpoint_cost_s']} s each)")


def planned_event(output, s, errors):
    """The loss reads as a planned event: one line naming the container, the simulated time and the
    checkpoint's step; none of smpirun's failure messages; the breakdown sums to failure.total_s."""
    noise = [l for l in output.splitlines() if "SMPI process did not return 0" in l or "Execution failed with code" in l
             or "demsim-app --cfg" in l]
    if noise:
        errors.append(f"a planned loss printed smpirun's failure messages: {noise[:3]}")
    want = "demsim: container n3-cn6700-3 lost at 0.12 s (simulated, step "
    line = [l for l in output.splitlines() if l.startswith(want)]
    if len(line) != 1 or "restarting from step 20 (checkpoint)" not in line[0]:
        errors.append(f"expected one line '{want}...; restarting from step 20 (checkpoint) ...', got {line}:\n"
                      f"{output[-1500:]}")
    if s:
        b = s["time_breakdown_s"]
        parts = sum(v for k, v in b.items() if k != "total_s")
        if abs(b["total_s"] - s["failure"]["total_s"]) > 1e-9 or abs(parts - b["total_s"]) > 1e-9 * b["total_s"]:
            errors.append(f"time_breakdown_s {b} does not sum to failure.total_s {s['failure']['total_s']}")
        if s["steps_run"] != 60 - s["restarted_from_step"]:
            errors.append(f"steps_run {s['steps_run']} after a restart from step {s['restarted_from_step']}")


def same_state(a, b, errors, what):
    pa, pb = final_positions(a), final_positions(b)
    if pa.shape != pb.shape or not np.all(np.isfinite(pa)):
        errors.append(f"{what}: final states of different shapes {pa.shape} {pb.shape}")
        return
    d = float(np.max(np.abs(pa - pb)))
    if d > 1e-9:
        errors.append(f"{what}: final positions differ by {d:.3g} m from the run without the loss")


def smpi_checks(demsim, out, errors):
    steps = ["--steps", "60"]
    lose = ["--set", "failure.host=n3-cn6700-3", "--set", "failure.at=0.12", "--set", "failure.restart_latency=1"]
    p, s, lost_dir = run(demsim, out, "lost", steps + lose)
    if p.returncode != 0:
        errors.append(f"the run with a loss exited {p.returncode}:\n{p.stdout[-2000:]}")
    check_loss(s, 60, 3, "n3-cn6700-3", errors, "SMPI, failure.at")
    planned_event(p.stdout, s, errors)
    if s and abs(s["failure"]["restart_latency_s"] - 1.0) > 1e-9:
        errors.append(f"restart latency {s['failure']['restart_latency_s']} s, expected the parameter's 1 s")
    p, ref, ref_dir = run(demsim, out, "reference", steps)
    if ref is None:
        errors.append(f"the run without a loss failed:\n{p.stdout[-2000:]}")
    elif s:
        same_state(lost_dir, ref_dir, errors, "SMPI")
    # the draws of failure.mtbf are reproducible, and a loss after the end changes nothing
    draws = []
    for k in range(2):
        p, d, rundir = run(demsim, out, f"mtbf{k}", steps + ["--set", "failure.mtbf=0.1", "--set", "failure.seed=3"])
        with open(os.path.join(rundir, "failures.txt")) as f:
            draws.append([l for l in f if l.startswith("failure")])
        if d is None or not draws[-1]:
            errors.append(f"failure.mtbf = 0.1 s: exit {p.returncode}, losses {draws[-1]}")
        elif d["restarted_from_step"] != d["failure"]["losses"][-1]["restarted_from_step"]:
            errors.append(f"failure.mtbf = 0.1 s: the last attempt began at step {d['restarted_from_step']}, the "
                          f"last loss left a checkpoint of step {d['failure']['losses'][-1]['restarted_from_step']}")
    if draws[0] != draws[1]:
        errors.append(f"the same seed drew different losses: {draws}")
    # a platform without storage_bw: the first checkpoint stops the run, naming the property
    with open(os.path.join(TOP, "platforms", "openstack.xml")) as f:
        xml = "".join(l for l in f if "storage_bw" not in l)
    with open(os.path.join(out, "no-storage.xml"), "w") as f:
        f.write(xml)
    p, _, _ = run(demsim, out, "no-storage", steps + ["--set", f"platform.file={os.path.join(out, 'no-storage.xml')}"])
    if p.returncode != 1 or "storage_bw" not in p.stdout:
        errors.append(f"a platform without storage_bw: exit {p.returncode}, expected 1 naming storage_bw:\n"
                      f"{p.stdout[-1500:]}")
    p, late, _ = run(demsim, out, "late", steps + ["--set", "failure.host=n3-cn6700-3", "--set", "failure.at=1000"])
    if late is None or late["failure"]["losses"] or late["failure"]["lost_s"] != 0 or late["ranks"] != 4:
        errors.append(f"a loss after the end: exit {p.returncode}, {late and late.get('failure')}")


def native_checks(demsim, out, errors):
    base = ["--steps", "2000", "--ranks", "2"]
    p, s, lost_dir = run(demsim, out, "native-lost", base + ["--set", "failure.host=n2-cn6700-2a", "--set",
                                                              "failure.at=0.3"])
    if p.returncode != 0:
        errors.append(f"native: the run with a loss exited {p.returncode}:\n{p.stdout[-2000:]}")
    check_loss(s, 2000, 1, "n2-cn6700-2a", errors, "native, failure.at")
    if s and not s["failure"]["restart_latency_s"] > 0:
        errors.append("native: the measured restart latency is not > 0")
    p, ref, ref_dir = run(demsim, out, "native-reference", base)
    if ref is None:
        errors.append(f"native: the run without a loss failed:\n{p.stdout[-2000:]}")
    elif s:
        same_state(lost_dir, ref_dir, errors, "native")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--native", action="store_true", help="the native build (mpirun, wall-clock time line)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    errors = []
    (native_checks if a.native else smpi_checks)(a.demsim, a.out, errors)
    return checking.verdict("check_failure.py", errors)


if __name__ == "__main__":
    sys.exit(main())
