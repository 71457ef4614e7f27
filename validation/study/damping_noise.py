#!/usr/bin/python3
"""The damping study in a cloud that varies: which policy damps noise without losing spikes.

    validation/study/damping_noise.py [--scale tiny|mid|study] [--seeds N] [--out DIR] [--demsim PATH]
                                [-j N] [--keep] [--scenarios NAME ...] [--policies P ...]

Runs damping.py's policies (NOW and RW as references, RW5, EWMA, PI, and RUPER) on
{case6-ratio0 (noise alone), case6-ratio50 (slow periodic stress), spiky-p2-d50, spiky-p8-d25}
(case2 and the other spiky files on request) once without noise and once per seed 1..N with the
scenarios' own noise (scenarios/README.md, "A cloud that varies"). It writes DIR/DAMPING-NOISE.md (a
table per scenario: mean and min-max over the seeds of the total time, gain over NOW, weight
oscillation and count change, beside the noiseless run; then what it says),
DIR/damping_noise.json (every run's figures) and DIR/damping_noise.png.

Times are kept in repartition intervals, as damping.py does: the spiky stress times are rescaled
by (interval at this scale / INTERVAL_FULL_S), and the noise's times (noise.cpu_tau, mem_tau,
net_tau, dt) by (interval at this scale / STUDY_INTERVAL_S), so that a repartition interval
spans as many noise correlation times as at the report's shortened length (--scale study: factor
1, the scenarios' noise unchanged). The interval is measured first (case6-ratio0 under NOW, no
noise). Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "scenarios"))
from sweep import bar_panels, fmt, run_one  # noqa: E402
from damping import all_scenarios, scaled_copy  # noqa: E402
from oscillation import (NOISELESS, SCALES, cell, parse_args, run_seeded, scale_args, seed_args, spread,  # noqa: E402
                         write_runs)
from make_scenarios import INTERVAL_FULL_S, NOISE  # noqa: E402

SCENARIOS = ["case6-ratio0", "case6-ratio50", "spiky-p2-d50", "spiky-p8-d25"]
POLICIES = ["NOW", "RW", "RW5", "EWMA", "PI", "RUPER"]
DAMPED = ["RW5", "EWMA", "PI", "RUPER"]
# One repartition interval (50 steps of case6-ratio0 under NOW, 500,000 particles) at the study
# scale, simulated s: validation/damping/DAMPING.md (measured by damping.py --scale study).
STUDY_INTERVAL_S = 1.164
NOISE_TIMES = ("cpu_tau", "mem_tau", "net_tau", "dt")


def measure_interval(a):
    """Simulated seconds of one repartition interval at a.scale, without stress or noise (NOW)."""
    row = run_one(a.demsim, os.path.join(TOP, "scenarios", "case6-ratio0.cfg"), "NOW",
                  os.path.join(a.out, "calibration"), scale_args(a.scale) + seed_args(NOISELESS))
    if row["status"] != 0 or not row.get("sim_time_s"):
        raise RuntimeError(f"the calibration run failed (see {a.out}/calibration/case6-ratio0-NOW/demsim.log)")
    _, steps, every = SCALES[a.scale]
    return row["sim_time_s"] / (steps / every)


def noise_times(factor, run_s):
    """--set arguments scaling the noise's times by factor; the profiles' horizon then twice the
    run's expected length run_s (the profiles of many short steps take time to build)."""
    if abs(factor - 1.0) < 1e-9:
        return []
    out = []
    for k in NOISE_TIMES:
        out += ["--set", f"noise.{k}={float(NOISE[k]) * factor:.6g}"]
    return out + ["--set", f"noise.horizon={2 * run_s:.6g}"]


def collect(scenario, policy, rundir):
    import figures as F
    path, metrics = os.path.join(rundir, "summary.json"), os.path.join(rundir, "metrics.csv")
    if not (os.path.exists(path) and os.path.exists(metrics)):
        return None
    with open(path) as f:
        s = json.load(f)
    after = s.get("lambda_after_repartition_percent") or []
    change, _ = F.count_oscillation(F.Metrics(metrics))
    return {"time": s["sim_time_s"], "reps": s["repartitions"], "osc": s["weight_oscillation"], "change": change,
            "lam_after": sum(after) / len(after) if after else None}


def gain(res, s, p, k):
    now, r = res.get((s, "NOW", k)), res.get((s, p, k))
    return (now["time"] - r["time"]) / now["time"] * 100 if now and r else None


def table(res, s, policies, seeds):
    lines = [f"### {s}", "",
             "| policy | total time (s), no noise | with noise: mean (min-max) | gain over NOW (%), no noise | "
             "with noise | weight oscillation, no noise | with noise | count change per repartition (%), with noise | "
             "mean lambda after repartitions (%), with noise |", "|---|---|---|---|---|---|---|---|---|"]
    for p in policies:
        base = res.get((s, p, NOISELESS)) or {}
        runs = [res.get((s, p, k)) or {} for k in seeds]
        lines.append(f"| {p} | {fmt(base.get('time'), '.4g')} | {cell([r.get('time') for r in runs], '.4g')} | "
                     f"{fmt(gain(res, s, p, NOISELESS), '.1f')} | {cell([gain(res, s, p, k) for k in seeds], '.1f')} | "
                     f"{fmt(base.get('osc'), '.4f')} | {cell([r.get('osc') for r in runs], '.4f')} | "
                     f"{cell([r.get('change') for r in runs], '.3f')} | {cell([r.get('lam_after') for r in runs], '.1f')} |")
    return lines + [""]


def mean_of(res, s, p, seeds, key):
    return spread([(res.get((s, p, k)) or {}).get(key) for k in seeds])[0]


def what_it_says(res, scenarios, policies, seeds):
    """Which policy damps noise (weight oscillation against RW's on the scenarios without spikes) and
    which keeps up with spikes (mean time relative to the fastest policy on the spiky ones)."""
    out = []
    quiet = [s for s in scenarios if not s.startswith("spiky")]
    spiky = [s for s in scenarios if s.startswith("spiky")]
    for s in scenarios:
        t = {p: mean_of(res, s, p, seeds, "time") for p in policies}
        if all(v is not None for v in t.values()):
            best = min(policies, key=t.get)
            out.append(f"{s}: fastest on average {best} ({t[best]:.4g} s).")
    rel = {}
    for group, members in (("without spikes", quiet), ("spiky", spiky)):
        ok = [s for s in members if all(mean_of(res, s, p, seeds, "time") for p in policies)]
        if not ok:
            continue
        rel[group] = {p: sum(mean_of(res, s, p, seeds, "time") / min(mean_of(res, s, q, seeds, "time") for q in policies)
                             for s in ok) / len(ok) for p in policies}
        out.append(f"Mean time relative to the fastest policy, scenarios {group} ({', '.join(ok)}): "
                   + ", ".join(f"{p} {rel[group][p]:.3f}" for p in sorted(policies, key=rel[group].get)) + ".")
    if "RW" in policies and quiet:
        osc = {p: sum(mean_of(res, s, p, seeds, "osc") or 0 for s in quiet) / len(quiet) for p in policies}
        out.append("Weight oscillation without spikes (mean over seeds and scenarios): " +
                   ", ".join(f"{p} {osc[p]:.4f}" for p in policies) + ".")
        damp = [p for p in DAMPED if p in policies and osc[p] < osc["RW"]
                and rel.get("spiky", {}).get(p, 9) <= rel.get("spiky", {}).get("RW", 0) + 0.005]
        out.append("Damps the noise (less weight oscillation than RW without spikes) and keeps up with the spikes "
                   "(mean relative time on the spiky scenarios within 0.5 % of RW's or better): "
                   + (", ".join(damp) if damp else "none of " + ", ".join(p for p in DAMPED if p in policies)) + ".")
    return [" ".join(out)]


def figure(res, scenarios, policies, seeds, path):
    def field(key):
        return lambda s, p: mean_of(res, s, p, seeds, key) or 0
    bar_panels(scenarios, policies, [("total simulated time (s), mean over seeds", field("time")),
                                     ("weight oscillation, mean over seeds", field("osc"))],
               "Load-balancing policies with noise", path)


def main():
    known = ["case6-ratio0"] + all_scenarios()
    a = parse_args(__doc__, "damping_noise", known, POLICIES, SCENARIOS)
    if a is None:
        return 2
    interval = measure_interval(a)
    stress, noise = interval / INTERVAL_FULL_S, interval / STUDY_INTERVAL_S
    print(f"damping_noise.py: one repartition interval = {interval:.4g} s simulated at the {a.scale} scale; "
          f"stress times x {stress:.4g}, noise times x {noise:.4g}", flush=True)
    files = {s: scaled_copy(s, stress, a.out) if s.startswith("spiky") else os.path.join(TOP, "scenarios", s + ".cfg")
             for s in a.scenarios}
    seeds = list(range(1, a.seeds + 1))
    runs = [(s, p, k) for k in [NOISELESS] + seeds for s in a.scenarios for p in a.policies]
    res, failed = run_seeded(a, runs, files.get, collect, noise_times(noise, interval * SCALES[a.scale][1] / SCALES[a.scale][2]))
    n, steps, every = SCALES[a.scale]
    lines = ["# Damping load-balancing oscillations with noise", "",
             f"Scale `{a.scale}`: {n:,} particles, {steps} steps, a repartition every {every}; seeds 1-{a.seeds}; one "
             f"repartition interval = {interval:.4g} s simulated (spiky stress times x {stress:.4g}, noise times x "
             f"{noise:.4g}: the noise spans as many repartition intervals as at the study scale). Noise: the scenarios' "
             "defaults (scenarios/README.md, 'A cloud that varies'). Weight oscillation as in the damping study; count "
             "change as in the oscillation study (figures.count_oscillation).", ""]
    for s in a.scenarios:
        lines += table(res, s, a.policies, seeds)
    lines += ["## What it says", ""] + what_it_says(res, a.scenarios, a.policies, seeds) + [""]
    with open(os.path.join(a.out, "DAMPING-NOISE.md"), "w") as f:
        f.write("\n".join(lines))
    write_runs(os.path.join(a.out, "damping_noise.json"),
               {"scale": a.scale, "seeds": seeds, "interval_s": interval, "noise_factor": noise}, res)
    figure(res, a.scenarios, a.policies, seeds, os.path.join(a.out, "damping_noise.png"))
    print(f"damping_noise.py: {os.path.join(a.out, 'DAMPING-NOISE.md')}, damping_noise.json, damping_noise.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
