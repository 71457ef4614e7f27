#!/usr/bin/python3
"""Particle-count oscillation at low imbalance, in a cloud that varies (noise.*).

    validation/study/oscillation.py [--scale tiny|mid|study] [--seeds N] [--out DIR] [--demsim PATH]
                              [-j N] [--keep] [--scenarios NAME ...] [--policies P ...]

The study saw particle counts oscillate between repartitions when the imbalance is low ("small
variations of system load"). This runs {case6-ratio0 (five identical unstressed containers),
case2} x {NOW, RW, RW5} once without noise (noise.enabled = false: the deterministic model) and
once per seed 1..N with the scenario's own noise (the case scenarios' grounded defaults,
scenarios/README.md, "A cloud that varies"), and measures what the report's oscillation row
measures (figures.count_oscillation): the mean |relative change| of a rank's particle count from
one repartition to the next, and the share of those changes that reverse the previous one's
sign. It writes DIR/OSCILLATION.md (a table per scenario: mean and min-max over the seeds beside
the noiseless run; then what it says), DIR/oscillation.json (every run's figures) and
DIR/oscillation.png. Each run's outputs are in DIR/<seed>/<scenario>-<policy>/ (seed "none":
without noise); --keep reuses a run whose summary.json is already there.

Scales: tiny = 20,000 particles, 100 steps, a repartition every 10; mid = 100,000 particles, 250
steps, a repartition every 25; study = 500,000 particles, 500 steps, a repartition every 50 (the
report's shortened length). A metrics row every
repartition interval / 5. Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad
arguments.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import sweep  # noqa: E402
from sweep import fmt, run_one  # noqa: E402

SCENARIOS = ["case6-ratio0", "case2"]
POLICIES = ["NOW", "RW", "RW5"]
NOISELESS = "none"  # the seed label of the runs without noise
# the policy studies' scales (sweep.py) and one between them: ten repartition intervals each
SCALES = dict(sweep.POLICY_SCALES, mid=(100000, 250, 25))


def scale_args(scale):
    n, steps, every = SCALES[scale]
    return ["--particles", str(n), "--steps", str(steps), "--repartition-every", str(every)]


def parse_args(doc, name, scenarios, policies, default=None):
    """The seeded studies' command line (this one and damping_noise.py): --scenarios of scenarios
    (default: default, or all), --policies of policies; None after saying what is wrong (exit status 2)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="tiny")
    ap.add_argument("--seeds", type=int, default=5, help="noise seeds 1..N (default 5)")
    ap.add_argument("--out", default=os.path.join(TOP, "out", name))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="reuse the runs whose summary.json is already in DIR")
    ap.add_argument("--scenarios", nargs="+", default=default or scenarios)
    ap.add_argument("--policies", nargs="+", choices=policies, default=policies)
    a = ap.parse_args()
    bad = [s for s in a.scenarios if s not in scenarios]
    if bad or a.seeds < 1:
        print(f"{name}.py: " + (f"unknown scenario(s) {', '.join(bad)}; known: {', '.join(scenarios)}" if bad
                                else f"--seeds {a.seeds}: at least 1"), file=sys.stderr)
        return None
    if not os.access(a.demsim, os.X_OK):
        print(f"{name}.py: {a.demsim}: not an executable demsim", file=sys.stderr)
        return None
    os.makedirs(a.out, exist_ok=True)
    return a


def write_runs(path, meta, res):
    """A seeded study's JSON: meta and one entry per run {(scenario, policy, seed): figures or None}."""
    with open(path, "w") as f:
        json.dump(dict(meta, runs=[{"scenario": s, "policy": p, "seed": k, **(r or {"failed": True})}
                                   for (s, p, k), r in sorted(res.items(), key=str)]), f, indent=1)


def seed_args(seed):
    """The noise settings of one run: the scenario's own noise with this seed, or none at all."""
    if seed == NOISELESS:
        return ["--set", "noise.enabled=false"]
    return ["--set", "noise.enabled=true", "--set", f"noise.seed={seed}"]


def run_seeded(a, runs, scenario_file, collect, extra=()):
    """Runs [(scenario, policy, seed)] one after the other or a.jobs at a time, each in
    a.out/<seed>/ at a.scale (plus extra), printing a line each. collect(scenario, policy, rundir)
    -> the run's figures or None. Returns ({(scenario, policy, seed): figures}, failures)."""
    import concurrent.futures
    _, steps, every = SCALES[a.scale]
    metrics = ["--set", f"output.metrics_every={max(1, every // 5)}"]

    def one(s, p, seed):
        outdir = os.path.join(a.out, str(seed))
        rundir = os.path.join(outdir, f"{s}-{p}")
        if a.keep and os.path.exists(os.path.join(rundir, "summary.json")):
            return s, p, seed, collect(s, p, rundir), 0.0
        row = run_one(a.demsim, scenario_file(s), p, outdir, scale_args(a.scale) + metrics + seed_args(seed) + list(extra))
        return s, p, seed, collect(s, p, rundir) if row["status"] == 0 else None, row["wall_s"]

    res, failed = {}, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(one, *r) for r in runs]
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            s, p, seed, r, wall = fut.result()
            res[(s, p, seed)] = r
            failed += r is None
            print(f"[{i}/{len(runs)}] seed {seed} {s} {p}: {'FAILED' if r is None else 'done'} ({wall:.1f} s wall)",
                  flush=True)
    return res, failed


def spread(values):
    """(mean, min, max) of the values that are not None, or (None, None, None)."""
    v = [x for x in values if x is not None]
    return (sum(v) / len(v), min(v), max(v)) if v else (None, None, None)


def cell(values, spec):
    mean, lo, hi = spread(values)
    return "-" if mean is None else f"{format(mean, spec)} ({format(lo, spec)}-{format(hi, spec)})"


def collect(scenario, policy, rundir):
    """Count oscillation (figures.count_oscillation), weight oscillation and time of one run."""
    import figures as F
    path = os.path.join(rundir, "summary.json")
    if not os.path.exists(path) or not os.path.exists(os.path.join(rundir, "metrics.csv")):
        return None
    with open(path) as f:
        s = json.load(f)
    change, reverse = F.count_oscillation(F.Metrics(os.path.join(rundir, "metrics.csv")))
    return {"time": s["sim_time_s"], "change": change, "reverse": reverse, "osc": s.get("weight_oscillation"),
            "reps": s["repartitions"], "noise": s.get("noise")}


def table(res, scenario, policies, seeds):
    lines = [f"### {scenario}", "",
             "| policy | count change per repartition (%), without noise | with noise: mean (min-max) over seeds | "
             "changes that reverse (%), without noise | with noise | weight oscillation, with noise | "
             "total time (s), without noise | with noise |",
             "|---|---|---|---|---|---|---|---|"]
    for p in policies:
        base = res.get((scenario, p, NOISELESS)) or {}
        runs = [res.get((scenario, p, k)) or {} for k in seeds]
        lines.append(f"| {p} | {fmt(base.get('change'), '.3f')} | {cell([r.get('change') for r in runs], '.3f')} | "
                     f"{fmt(base.get('reverse'), '.0f')} | {cell([r.get('reverse') for r in runs], '.0f')} | "
                     f"{cell([r.get('osc') for r in runs], '.4f')} | {fmt(base.get('time'), '.4g')} | "
                     f"{cell([r.get('time') for r in runs], '.4g')} |")
    return lines + [""]


def what_it_says(res, scenarios, policies, seeds):
    """Sentences computed from the tables: does noise make the counts oscillate, and does RW5 damp it."""
    out = []
    for s in scenarios:
        parts = []
        for p in [q for q in ("RW", "RW5") if q in policies]:
            base = (res.get((s, p, NOISELESS)) or {}).get("change")
            noisy, rev = spread([(res.get((s, p, k)) or {}).get("change") for k in seeds]), \
                spread([(res.get((s, p, k)) or {}).get("reverse") for k in seeds])
            if noisy[0] is None:
                continue
            parts.append(f"{p} changes the counts by {noisy[0]:.3f} % per repartition with noise "
                         f"({fmt(base, '.3f')} % without), {rev[0]:.0f} % of the changes reversing")
        if parts:
            out.append(f"On {s}: " + "; ".join(parts) + ".")
    return [" ".join(out)] if out else ["No run completed: nothing to compare."]


def figure(res, scenarios, policies, seeds, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(policies)
    for ax, key, label in ((axes[0], "change", "count change per repartition (%)"),
                           (axes[1], "reverse", "changes that reverse (%)")):
        for j, p in enumerate(policies):
            xs = [i + (j - (len(policies) - 1) / 2) * width for i in range(len(scenarios))]
            m = [spread([(res.get((s, p, k)) or {}).get(key) for k in seeds]) for s in scenarios]
            mean = [x[0] or 0 for x in m]
            err = [[(x[0] or 0) - (x[1] or 0) for x in m], [(x[2] or 0) - (x[0] or 0) for x in m]]
            ax.bar(xs, mean, width, yerr=err, capsize=3, label=f"{p}, with noise (min-max over seeds)")
            base = [(res.get((s, p, NOISELESS)) or {}).get(key) for s in scenarios]
            ax.plot(xs, [b if b is not None else float("nan") for b in base], "kx",
                    label="without noise" if j == 0 else None)
        ax.set_xticks(range(len(scenarios)))
        ax.set_xticklabels(scenarios)
        ax.set_ylabel(label)
        ax.set_ylim(top=ax.get_ylim()[1] * 1.35)  # room for the legend
    axes[0].legend(fontsize="small")
    fig.suptitle("Particle-count oscillation between repartitions, with and without noise")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def noise_line(res):
    """The noise settings the runs used, from a noisy run's summary.json."""
    rec = next((r["noise"] for r in res.values() if r and r.get("noise")), None)
    if not rec:
        return "Noise settings: none recorded."
    return ("Noise settings (the scenarios' defaults, scenarios/README.md): " +
            ", ".join(f"{k} {v}" for k, v in rec.items() if k != "seed") + ".")


def main():
    a = parse_args(__doc__, "oscillation", SCENARIOS, POLICIES)
    if a is None:
        return 2
    seeds = list(range(1, a.seeds + 1))
    runs = [(s, p, k) for k in [NOISELESS] + seeds for s in a.scenarios for p in a.policies]
    res, failed = run_seeded(a, runs, lambda s: os.path.join(TOP, "scenarios", s + ".cfg"), collect)
    n, steps, every = SCALES[a.scale]
    lines = ["# Particle-count oscillation at low imbalance, with noise", "",
             f"Scale `{a.scale}`: {n:,} particles, {steps} steps, a repartition every {every}; seeds 1-{a.seeds}. "
             "Count change: mean over ranks and repartitions (from the second) of |change of a rank's particle count| "
             "/ its count; reversing: the share of those changes whose sign is the opposite of the previous one's "
             "(figures.count_oscillation, as the report's oscillation row). " + noise_line(res), ""]
    for s in a.scenarios:
        lines += table(res, s, a.policies, seeds)
    lines += ["## What it says", ""] + what_it_says(res, a.scenarios, a.policies, seeds) + [""]
    with open(os.path.join(a.out, "OSCILLATION.md"), "w") as f:
        f.write("\n".join(lines))
    write_runs(os.path.join(a.out, "oscillation.json"), {"scale": a.scale, "seeds": seeds}, res)
    figure(res, a.scenarios, a.policies, seeds, os.path.join(a.out, "oscillation.png"))
    print(f"oscillation.py: {os.path.join(a.out, 'OSCILLATION.md')}, oscillation.json, oscillation.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
