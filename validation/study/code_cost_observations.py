#!/usr/bin/python3
"""The study's observations at demsim's code (f = 1) and at the study's code (device.code_cost =
the estimate of validation/code_cost/), and how each moves with f.

    validation/study/code_cost_observations.py [--scale tiny|study] [--out DIR] [--demsim build/smpi/demsim]
        [-j 2] [--resume] [--commit C]

For f in 1, 2, 4, 8 and the estimate (code_cost.json's "estimate", from the companion paper's
speed-up by validation/study/code_cost.py), the runs that the report's observations of cases 1 and
5 are read from: case 1 under NOW and RW, case 5 with one stressed container under NOW, RW and RW5,
at the report's shortened scale (--scale study: 500,000 particles, 500 steps, a repartition every
50, a metrics row every 10), without noise (noise.enabled = false: f's effect alone). Each observation is computed by report.py's own code (observations()),
on the runs of one f, so that a row here and the report's row are the same quantity. Rows that
need runs this study does not make (the other cases, the full length) are left out.
Writes DIR/OBSERVATIONS_F.md (observation, the study's figure, the simulator's at each f),
DIR/observations_f.json and DIR/observations_f.png (the numeric figures against f).
"""
import json
import os
import re
import sys

import figures as F
import report
import sweep

RUNS = [("case1", "NOW"), ("case1", "RW"), ("case5-stress1", "NOW"), ("case5-stress1", "RW"),
        ("case5-stress1", "RW5")]
BASE = (1, 2, 4, 8)
# (particles, steps, repartition every, metrics every)
SCALES = {"tiny": (2000, 80, 20, 5), "study": (500000, 500, 50, 10)}
ESTIMATE = os.path.join(sweep.TOP, "validation", "code_cost", "code_cost.json")


def estimate():
    """code_cost.py's estimate of the study's code's f (rounded as its report states it)."""
    with open(ESTIMATE) as f:
        est = json.load(f).get("estimate")
    if not est:
        raise SystemExit(f"code_cost_observations.py: {ESTIMATE} has no estimate (run validation/study/code_cost.py)")
    return float(f"{est:.2g}")


def factors():
    return sorted(set(BASE) | {estimate()})


def jobs(scale, out):
    particles, steps, every, metrics = SCALES[scale]
    todo = []
    for f in factors():
        extra = ["--particles", str(particles), "--steps", str(steps), "--repartition-every", str(every),
                 "--set", f"output.metrics_every={metrics}", "--set", f"device.code_cost={f:g}",
                 "--set", "noise.enabled=false"]
        for case, policy in RUNS:
            todo.append(((f, case, policy), f"f{f:g}/{case}-{policy}", (case, policy, extra)))
    return todo


def run_job(demsim, out, job, resume=False):
    key, name, (case, policy, extra) = job
    scenario = os.path.join(sweep.TOP, "scenarios", f"{case}.cfg")
    s = sweep.run_or_reuse(demsim, scenario, policy, os.path.join(out, os.path.dirname(name)), extra, resume)
    return key, (None if s is None else {"time": s["sim_time_s"]})


def number(text):
    """The first number of a figure ("26.8 % shortened" -> 26.8), or None."""
    m = re.search(r"-?\d+(\.\d+)?", text or "")
    return float(m.group(0)) if m else None


def rows_by_factor(out):
    """{observation: {"study": text, f: simulator text}} from report.observations on each f's runs."""
    table = {}
    names = [f"{c}-{p}" for c, p in RUNS]
    for f in factors():
        data = F.load_runs(os.path.join(out, f"f{f:g}"), names)
        rows, _ = report.observations(data, {"case45_stressed": [1]})
        for obs, study, sim, _, _ in rows:
            sim = sim.replace(" (shortened run; the full-length pair did not run)", " (shortened)")
            if "n/a" in sim or "highest" in obs or "only about" in study:
                continue
            table.setdefault(obs, {"study": study})[f] = sim
    return table


def draw(table, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fs = factors()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for obs, row in table.items():
        ys = [number(row.get(f)) for f in fs]
        if all(y is not None for y in ys):
            ax.plot(fs, ys, "o-", label=obs[:70])
    ax.axvline(estimate(), color="grey", ls=":", label=f"estimate f = {estimate():g}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("device.code_cost f (the code's kernel time over demsim's)")
    ax.set_ylabel("the simulator's figure (% or count)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(a, res):
    table = rows_by_factor(a.out)
    fs = factors()
    particles, steps, every, _ = SCALES[a.scale]
    with open(os.path.join(a.out, "observations_f.json"), "w") as f:
        json.dump({"factors": fs, "estimate": estimate(), "scale": a.scale,
                   "rows": [dict(observation=o, study=r["study"], **{f"f{k:g}": r.get(k) for k in fs})
                            for o, r in table.items()]}, f, indent=1)
    draw(table, os.path.join(a.out, "observations_f.png"))
    head = " | ".join(f"f = {k:g}" + (" (the study's code)" if k == estimate() else "") for k in fs)
    L = ["# The study's observations at demsim's code and at the study's code", "",
         f"`validation/study/code_cost_observations.py --scale {a.scale}`{sweep.commit_note(a.commit)}: case 1 "
         f"(NOW, RW) and case 5 with one stressed container (NOW, RW, RW5), {particles:,} particles, {steps} steps, "
         f"a repartition every {every}, no noise, at each device.code_cost f; f = {estimate():g} is the study's code as "
         "validation/code_cost/ estimates it from the companion paper's speed-up (f = 1: demsim's own kernels). "
         "Each figure is computed by report.py's code for the report's row of the same name, on that f's runs.", "",
         f"| observation (STUDY.md) | study | {head} |", "|---|---|" + "---|" * len(fs)]
    for obs, row in table.items():
        L.append(f"| {obs} | {row['study']} | " + " | ".join(row.get(k, "-") for k in fs) + " |")
    L += ["", "![the observations against f](observations_f.png)"]
    with open(os.path.join(a.out, "OBSERVATIONS_F.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    return f"{os.path.join(a.out, 'OBSERVATIONS_F.md')}, observations_f.json, observations_f.png"


def main():
    return sweep.run_study(__doc__, SCALES, "code_cost_observations", jobs, run_job, write)


if __name__ == "__main__":
    sys.exit(main())
