#!/usr/bin/python3
"""Damping load-balancing oscillations: every policy on steady and spiky loads.

    validation/study/damping.py [--scale tiny|study] [--out DIR] [--demsim PATH] [-j N]
                          [--scenarios NAME ...] [--policies P ...]

Runs {case2, case6-ratio50, the spiky family} x {NOW, RW, RW5, EWMA, PI} (scenarios/README.md)
and writes DIR/DAMPING.md (a table per scenario: total simulated time, gain over NOW,
repartitions, weight oscillation, mean imbalance of the intervals after a repartition; then a
"which policy when" paragraph computed from those figures) and DIR/damping.png (total time and
oscillation per policy and scenario). Each run's outputs are in DIR/<scenario>-<policy>/.

Scales: tiny = 20,000 particles, 100 steps, a repartition every 10 (about a minute on 2 cores);
study = 500,000 particles, 500 steps, a repartition every 50 (about half an hour).

The spiky scenarios' stress periods are multiples of a repartition interval at the full scale
(scenarios/make_scenarios.py, INTERVAL_FULL_S). A repartition interval lasts a different
simulated time at each scale, so the script first measures it (case6-ratio0 under NOW at the
chosen scale) and runs copies of the spiky files (DIR/scenarios/) with every on/off time
rescaled by (measured interval / INTERVAL_FULL_S): a period of 2 intervals stays 2 intervals.
Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "scenarios"))
from sweep import (POLICY_SCALES as SCALES, bar_panels, finish_policy_study, fmt, policy_args,  # noqa: E402
                   run_one, run_policies, scale_args, summary_of)
from make_scenarios import INTERVAL_FULL_S  # noqa: E402

POLICIES = ["NOW", "RW", "RW5", "EWMA", "PI"]
DAMPED = ["RW5", "EWMA", "PI"]


def all_scenarios():
    spiky = sorted(os.path.splitext(os.path.basename(p))[0]
                   for p in glob.glob(os.path.join(TOP, "scenarios", "spiky-*.cfg")))
    return ["case2", "case6-ratio50"] + spiky


def measure_interval(demsim, out, scale):
    """Simulated seconds of one repartition interval at this scale, without stress (NOW)."""
    row = run_one(demsim, os.path.join(TOP, "scenarios", "case6-ratio0.cfg"), "NOW",
                  os.path.join(out, "calibration"), scale_args(scale))
    if row["status"] != 0 or not row.get("sim_time_s"):
        raise RuntimeError(f"the calibration run failed (see {out}/calibration/case6-ratio0-NOW/demsim.log)")
    _, steps, every = SCALES[scale]
    return row["sim_time_s"] / (steps / every)


def scaled_copy(name, factor, out):
    """DIR/scenarios/NAME.cfg: the spiky file with its on/off/start times multiplied by factor."""
    with open(os.path.join(TOP, "scenarios", name + ".cfg")) as f:
        text = f.read()

    def scale(m):
        return f"{m.group(1)} = {float(m.group(2)) * factor:.6g};"

    text = re.sub(r"\b(on|off|start) = ([0-9.eE+-]+);", scale, text)
    text = text.replace('"../platforms/', '"' + os.path.join(TOP, "platforms") + "/")
    os.makedirs(os.path.join(out, "scenarios"), exist_ok=True)
    path = os.path.join(out, "scenarios", name + ".cfg")
    with open(path, "w") as f:
        f.write(f"# {name}.cfg with its stress times x {factor:.6g} (validation/study/damping.py)\n" + text)
    return path


def collect(row, out):
    """The run's figures from its summary.json (None where the run failed)."""
    s = summary_of(out, row["scenario"], row["policy"]) if row["status"] == 0 else None
    if s is None:
        return None
    after = s.get("lambda_after_repartition_percent") or []
    return {"time": s["sim_time_s"], "reps": s["repartitions"], "osc": s["weight_oscillation"],
            "lam_after": sum(after) / len(after) if after else float("nan")}


def table(name, res, policies):
    now = res.get((name, "NOW"))
    lines = [f"### {name}", "",
             "| policy | total time (s) | gain over NOW (%) | repartitions | weight oscillation | mean lambda after repartitions (%) |",
             "|---|---|---|---|---|---|"]
    for p in policies:
        r = res.get((name, p))
        if r is None:
            lines.append(f"| {p} | failed | | | | |")
            continue
        gain = (now["time"] - r["time"]) / now["time"] * 100 if now else None
        lines.append(f"| {p} | {r['time']:.4g} | {fmt(gain, '.1f')} | {r['reps']} | {r['osc']:.4f} | "
                     f"{fmt(r['lam_after'], '.1f')} |")
    return lines + [""]


def advice(res, scenarios, policies):
    """The "which policy when" paragraph: every sentence is computed from the table's figures."""
    out = []
    ok = [s for s in scenarios if all(res.get((s, p)) for p in policies)]
    if not ok:
        return ["No scenario completed under every policy: nothing to compare."]
    wins = {p: [] for p in policies}
    for s in ok:
        best = min(policies, key=lambda p: res[(s, p)]["time"])
        wins[best].append(s)
    out.append("Fastest policy per scenario: " + "; ".join(
        f"{p} on {', '.join(w)}" for p, w in wins.items() if w) + ".")
    for group, members in (("spiky", [s for s in ok if s.startswith("spiky")]),
                           ("steady", [s for s in ok if not s.startswith("spiky")])):
        if not members:
            continue
        # mean time relative to the scenario's fastest policy: 1.00 = always the fastest
        rel = {p: sum(res[(s, p)]["time"] / min(res[(s, q)]["time"] for q in policies) for s in members) / len(members)
               for p in policies}
        order = sorted(policies, key=rel.get)
        out.append(f"On the {group} scenarios ({', '.join(members)}) the mean time relative to the fastest policy is "
                   + ", ".join(f"{p} {rel[p]:.3f}" for p in order) + f": {order[0]} is the one to use there.")
    if "RW" in policies:
        damped = [p for p in DAMPED if p in policies]
        osc = {p: sum(res[(s, p)]["osc"] for s in ok) / len(ok) for p in ["RW"] + damped}
        for p in damped:
            slower = sum(res[(s, p)]["time"] > res[(s, "RW")]["time"] for s in ok)
            ratio = osc[p] / osc["RW"] if osc["RW"] > 0 else float("nan")
            out.append(f"{p}: mean weight oscillation {osc[p]:.4f} against RW's {osc['RW']:.4f} "
                       f"({fmt(ratio, '.2f')} x), slower than RW on {slower} of {len(ok)} scenarios.")
    return [" ".join(out)]


def figure(res, scenarios, policies, path):
    def field(key):
        return lambda s, p: res[(s, p)][key] if res.get((s, p)) else 0
    bar_panels(scenarios, policies, [("total simulated time (s)", field("time")), ("weight oscillation", field("osc"))],
               "Load-balancing policies on steady and spiky loads", path)


def main():
    a = policy_args(__doc__, "damping", all_scenarios(), POLICIES, os.cpu_count() or 1)
    if a is None:
        return 2
    scenarios = a.scenarios
    interval = measure_interval(a.demsim, a.out, a.scale)
    factor = interval / INTERVAL_FULL_S
    print(f"damping.py: one repartition interval = {interval:.4g} s simulated at the {a.scale} scale; "
          f"spiky stress times x {factor:.4g}", flush=True)
    files = {s: scaled_copy(s, factor, a.out) if s.startswith("spiky") else os.path.join(TOP, "scenarios", s + ".cfg")
             for s in scenarios}
    runs = [(s, p) for s in scenarios for p in a.policies]
    res, failed = run_policies(a, runs, files.get, lambda row: collect(row, a.out))
    n, steps, every = SCALES[a.scale]
    lines = ["# Damping load-balancing oscillations", "",
             f"Scale `{a.scale}`: {n} particles, {steps} steps, a repartition every {every}; one repartition "
             f"interval = {interval:.4g} s simulated (spiky stress times x {factor:.4g}). Weight oscillation: "
             "mean over ranks and consecutive pairs of weight changes of the smaller change where the two have "
             "opposite signs (scenarios/README.md); 0 when the weights settle.", ""]
    for s in scenarios:
        lines += table(s, res, a.policies)
    lines += ["## Which policy when", ""] + advice(res, scenarios, a.policies) + [""]
    return finish_policy_study(a, "damping", lines, "DAMPING.md", "damping.png",
                               lambda path: figure(res, scenarios, a.policies, path), failed)


if __name__ == "__main__":
    sys.exit(main())
