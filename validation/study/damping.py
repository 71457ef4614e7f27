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
import argparse
import concurrent.futures
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "scenarios"))
from sweep import run_one  # noqa: E402
from make_scenarios import INTERVAL_FULL_S  # noqa: E402

SCALES = {"tiny": (20000, 100, 10), "study": (500000, 500, 50)}
POLICIES = ["NOW", "RW", "RW5", "EWMA", "PI"]
DAMPED = ["RW5", "EWMA", "PI"]


def all_scenarios():
    spiky = sorted(os.path.splitext(os.path.basename(p))[0]
                   for p in glob.glob(os.path.join(TOP, "scenarios", "spiky-*.cfg")))
    return ["case2", "case6-ratio50"] + spiky


def scale_args(scale):
    n, steps, every = SCALES[scale]
    return ["--particles", str(n), "--steps", str(steps), "--repartition-every", str(every)]


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
    path = os.path.join(out, f"{row['scenario']}-{row['policy']}", "summary.json")
    if row["status"] != 0 or not os.path.exists(path):
        return None
    with open(path) as f:
        s = json.load(f)
    after = s.get("lambda_after_repartition_percent") or []
    return {"time": s["sim_time_s"], "reps": s["repartitions"], "osc": s["weight_oscillation"],
            "lam_after": sum(after) / len(after) if after else float("nan")}


def fmt(v, spec):
    return "-" if v is None or v != v else format(v, spec)


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


def bar_panels(scenarios, policies, panels, title, path):
    """Stacked bar charts sharing the scenario axis, a bar per policy: panels is a list of
    (y label, value(scenario, policy)); the top one leaves room for the legend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.6 * len(scenarios)), 3.5 * len(panels)), sharex=True)
    width = 0.8 / len(policies)
    for ax, (label, value) in zip(axes, panels):
        for j, p in enumerate(policies):
            xs = [i + (j - (len(policies) - 1) / 2) * width for i in range(len(scenarios))]
            ax.bar(xs, [value(s, p) for s in scenarios], width, label=p)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_ylabel(label)
    top = max([panels[0][1](s, p) for s in scenarios for p in policies] + [1e-9])
    axes[0].set_ylim(top=1.25 * top)
    axes[-1].set_xticks(range(len(scenarios)))
    axes[-1].set_xticklabels(scenarios, rotation=20, ha="right")
    axes[0].legend(ncol=len(policies), fontsize="small")
    axes[0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure(res, scenarios, policies, path):
    def field(key):
        return lambda s, p: res[(s, p)][key] if res.get((s, p)) else 0
    bar_panels(scenarios, policies, [("total simulated time (s)", field("time")), ("weight oscillation", field("osc"))],
               "Load-balancing policies on steady and spiky loads", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="tiny")
    ap.add_argument("--out", default=os.path.join(TOP, "out", "damping"))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--scenarios", nargs="+", help="a subset of the scenarios (names, without .cfg)")
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=POLICIES)
    a = ap.parse_args()
    known = all_scenarios()
    scenarios = a.scenarios or known
    bad = [s for s in scenarios if s not in known]
    if bad:
        print(f"damping.py: unknown scenario(s) {', '.join(bad)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    if not os.access(a.demsim, os.X_OK):
        print(f"damping.py: {a.demsim}: not an executable demsim", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    interval = measure_interval(a.demsim, a.out, a.scale)
    factor = interval / INTERVAL_FULL_S
    print(f"damping.py: one repartition interval = {interval:.4g} s simulated at the {a.scale} scale; "
          f"spiky stress times x {factor:.4g}", flush=True)
    files = {s: scaled_copy(s, factor, a.out) if s.startswith("spiky") else os.path.join(TOP, "scenarios", s + ".cfg")
             for s in scenarios}
    runs = [(s, p) for s in scenarios for p in a.policies]
    res, failed = {}, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, a.demsim, files[s], p, a.out, scale_args(a.scale)) for s, p in runs]
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            row = fut.result()
            r = collect(row, a.out)
            res[(row["scenario"], row["policy"])] = r
            failed += r is None
            print(f"[{i}/{len(runs)}] {row['scenario']} {row['policy']}: "
                  f"{'FAILED' if r is None else 'simulated %.4g s' % r['time']} ({row['wall_s']:.1f} s wall)", flush=True)
    n, steps, every = SCALES[a.scale]
    lines = ["# Damping load-balancing oscillations", "",
             f"Scale `{a.scale}`: {n} particles, {steps} steps, a repartition every {every}; one repartition "
             f"interval = {interval:.4g} s simulated (spiky stress times x {factor:.4g}). Weight oscillation: "
             "mean over ranks and consecutive pairs of weight changes of the smaller change where the two have "
             "opposite signs (scenarios/README.md); 0 when the weights settle.", ""]
    for s in scenarios:
        lines += table(s, res, a.policies)
    lines += ["## Which policy when", ""] + advice(res, scenarios, a.policies) + [""]
    with open(os.path.join(a.out, "DAMPING.md"), "w") as f:
        f.write("\n".join(lines))
    figure(res, scenarios, a.policies, os.path.join(a.out, "damping.png"))
    print(f"damping.py: {os.path.join(a.out, 'DAMPING.md')}, {os.path.join(a.out, 'damping.png')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
