#!/usr/bin/python3
"""Does a graph or hypergraph partitioner beat RCB on heterogeneous containers?

    validation/study/partitioners.py [--scale tiny|study] [--out DIR] [--demsim PATH] [-j N]
                               [--scenarios NAME ...] [--policies P ...] [--partitioners X ...]
                               [--reuse] [--report-only]

Runs {case1, case2, case3} x {NOW, RW} x {RCB, RIB, HSFC, PHG, GRAPH} (run.partitioner,
scenarios/README.md) and writes DIR/PARTITIONERS.md (a table per scenario: total simulated
time, its difference to RCB under the same policy, ghosts and ghost bytes per rank per step,
edge cut, migration per repartition, partition time; then a paragraph that answers the
question, computed from those figures) and DIR/partitioners.png (total time and ghost volume
per partitioner). Each run's outputs are in DIR/<scenario>-<policy>-<partitioner>/.

Scales: tiny = 20,000 particles, 60 steps, a repartition every 10 (seconds a run);
study = 500,000 particles, 500 steps, a repartition every 50 (minutes a run; PHG and GRAPH
take longest: their partitioning runs for real, once per rank, on this machine).
--reuse keeps the runs whose summary.json is already in DIR at the same scale (a sweep stopped
half way resumes); --report-only runs nothing and writes the report of the runs in DIR (a run
not there is listed as not run).
Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

SCALES = {"tiny": (20000, 60, 10), "study": (500000, 500, 50)}
SCENARIOS = ["case1", "case2", "case3"]
POLICIES = ["NOW", "RW"]
PARTITIONERS = ["RCB", "RIB", "HSFC", "PHG", "GRAPH"]
CONNECTIVITY = ["PHG", "GRAPH"]


def scale_args(scale):
    n, steps, every = SCALES[scale]
    return ["--particles", str(n), "--steps", str(steps), "--repartition-every", str(every)]


def rundir(out, s, p, x):
    return os.path.join(out, f"{s}-{p}-{x}")


def summary_at_scale(d, scale):
    """The run's summary.json when it is there and of this scale, else None."""
    path = os.path.join(d, "summary.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        s = json.load(f)
    n, steps, _ = SCALES[scale]
    return s if s.get("particles") == n and s.get("steps") == steps else None


def run_one(demsim, scenario, policy, partitioner, out, scale, reuse):
    d = rundir(out, scenario, policy, partitioner)
    if reuse and summary_at_scale(d, scale):
        return {"scenario": scenario, "policy": policy, "partitioner": partitioner, "status": 0, "wall_s": 0.0,
                "reused": True}
    cmd = [demsim, "run", os.path.join(TOP, "scenarios", scenario + ".cfg"), "--policy", policy,
           "--set", f"run.partitioner={partitioner}", "--out", d, "--quiet"] + scale_args(scale)
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "demsim.log"), "w") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + p.stdout)
    return {"scenario": scenario, "policy": policy, "partitioner": partitioner, "status": p.returncode,
            "wall_s": time.time() - t0, "reused": False}


def collect(out, s, p, x, scale):
    """A run's figures from its summary.json (None where it failed or is missing)."""
    j = summary_at_scale(rundir(out, s, p, x), scale)
    if j is None:
        return None
    return {"time": j["sim_time_s"], "ghosts": j["ghosts_per_rank_per_step"],
            "gbytes": j["ghost_bytes_per_rank_per_step"], "gbytes_max": j["ghost_bytes_per_rank_per_step_max"],
            "cut": j["edge_cut"], "cut_frac": j["edge_cut_fraction"],
            "mig": j["migration_particles_per_repartition"], "mig_bytes": j["migration_bytes_per_repartition"],
            "part": j["partition_s"], "part_wall": j["wall_partition_s"], "lam": j["lambda_final_percent"],
            "reps": j["repartitions"], "ke": j["kinetic_energy_end_J"], "wall": j["wall_s"]}


def fmt(v, spec):
    return "-" if v is None or v != v else format(v, spec)


def table(s, res, policies, parts):
    lines = [f"### {s}", "",
             "| policy | partitioner | total time (s) | vs RCB (%) | ghosts / rank / step | ghost kB / rank / step "
             "(max rank) | edge cut (% of pairs) | migrated / repartition (particles, MB) | partition time (s, "
             "simulated; real) | lambda final (%) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p in policies:
        rcb = res.get((s, p, "RCB"))
        for x in parts:
            r = res.get((s, p, x))
            if r is None:
                lines.append(f"| {p} | {x} | not run or failed | | | | | | | |")
                continue
            d = (r["time"] / rcb["time"] - 1) * 100 if rcb else None
            lines.append(f"| {p} | {x} | {r['time']:.4g} | {fmt(d, '+.1f')} | {r['ghosts']:.0f} | "
                         f"{r['gbytes'] / 1e3:.0f} ({r['gbytes_max'] / 1e3:.0f}) | {r['cut']:.0f} "
                         f"({100 * r['cut_frac']:.2f}) | {r['mig']:.0f}, {r['mig_bytes'] / 1e6:.2f} | "
                         f"{r['part']:.3g}; {r['part_wall']:.3g} | {r['lam']:.1f} |")
    return lines + [""]


def answer(res, scenarios, policies, parts):
    """The paragraph that answers the question: every number is computed from the tables."""
    runs = [(s, p) for s in scenarios for p in policies if res.get((s, p, "RCB"))]
    if not runs:
        return ["No RCB run completed: nothing to compare."]
    out = []
    best = {}
    for s, p in runs:
        done = [x for x in parts if res.get((s, p, x))]
        best[(s, p)] = min(done, key=lambda x: res[(s, p, x)]["time"])
    out.append("Fastest partitioner per scenario and policy: " + "; ".join(
        f"{s} {p}: {best[(s, p)]} ({res[(s, p, best[(s, p)])]['time']:.4g} s)" for s, p in runs) + ".")
    for x in [x for x in parts if x != "RCB"]:
        pairs = [(s, p) for s, p in runs if res.get((s, p, x))]
        if not pairs:
            continue
        t = [res[(s, p, x)]["time"] / res[(s, p, "RCB")]["time"] for s, p in pairs]
        g = [res[(s, p, x)]["gbytes"] / res[(s, p, "RCB")]["gbytes"] for s, p in pairs if res[(s, p, "RCB")]["gbytes"]]
        c = [res[(s, p, x)]["cut"] / res[(s, p, "RCB")]["cut"] for s, p in pairs if res[(s, p, "RCB")]["cut"]]
        # the loop without the partition's own time: what the parts alone cost
        lt = [(res[(s, p, x)]["time"] - res[(s, p, x)]["part"]) / (res[(s, p, "RCB")]["time"] - res[(s, p, "RCB")]["part"])
              for s, p in pairs]
        wins = sum(v < 1 for v in t)
        out.append(f"{x} against RCB over {len(pairs)} runs: total time x {min(t):.3f}..{max(t):.3f} (mean "
                   f"{sum(t) / len(t):.3f}; faster in {wins}); ghost volume x {fmt(sum(g) / len(g) if g else None, '.3f')}; "
                   f"edge cut x {fmt(sum(c) / len(c) if c else None, '.3f')}; time without partitioning x "
                   f"{sum(lt) / len(lt):.3f}.")
    conn = [x for x in CONNECTIVITY if x in parts]
    conn_pairs = [(s, p, x) for s, p in runs for x in conn if res.get((s, p, x))]
    if conn_pairs:
        beat = [(s, p, x) for s, p, x in conn_pairs if res[(s, p, x)]["time"] < res[(s, p, "RCB")]["time"]]
        part_share = [res[(s, p, x)]["part"] / res[(s, p, x)]["time"] for s, p, x in conn_pairs]
        verdict = ("Yes" if len(beat) == len(conn_pairs) else "No" if not beat else "Sometimes")
        out.append(f"Answer: {verdict}: a connectivity-based partitioner ({', '.join(conn)}) beat RCB's total time "
                   f"in {len(beat)} of {len(conn_pairs)} runs"
                   + (f" ({', '.join(f'{s} {p} {x}' for s, p, x in beat)})" if beat else "")
                   + f"; its partitioning took {100 * min(part_share):.1f}..{100 * max(part_share):.1f} % of the "
                   "total simulated time.")
    return [" ".join(out)]


def figure(res, scenarios, policies, parts, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = [(s, p) for s in scenarios for p in policies]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.5 * len(groups)), 7), sharex=True)
    width = 0.8 / len(parts)
    for j, x in enumerate(parts):
        xs = [i + (j - (len(parts) - 1) / 2) * width for i in range(len(groups))]
        times = [res[(s, p, x)]["time"] if res.get((s, p, x)) else 0 for s, p in groups]
        vol = [res[(s, p, x)]["gbytes"] / 1e3 if res.get((s, p, x)) else 0 for s, p in groups]
        axes[0].bar(xs, times, width, label=x)
        axes[1].bar(xs, vol, width, label=x)
    top = max((r["time"] for r in res.values() if r), default=1.0)
    axes[0].set_ylim(0, 1.25 * top)  # room for the legend above the bars
    axes[0].set_ylabel("total simulated time (s)")
    axes[1].set_ylabel("ghost kB per rank per step")
    axes[1].set_xticks(range(len(groups)))
    axes[1].set_xticklabels([f"{s} {p}" for s, p in groups], rotation=20, ha="right")
    axes[0].legend(ncol=len(parts), fontsize="small")
    axes[0].set_title("Partitioners on heterogeneous containers")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(out, scale, scenarios, policies, parts, res, note=""):
    n, steps, every = SCALES[scale]
    missing = [f"{s} {p} {x}" for s in scenarios for p in policies for x in parts if res.get((s, p, x)) is None]
    lines = ["# Partitioners on heterogeneous containers", "",
             f"Scale `{scale}`: {n:,} particles, {steps} steps, a repartition every {every}; scenarios "
             f"{', '.join(scenarios)}; policies {', '.join(policies)}; partitioners {', '.join(parts)} "
             "(`validation/study/partitioners.py --scale " + scale + "`). Ghosts and ghost bytes: mean per rank and step "
             "(every ghost message, the registrations' included, sent plus received). Edge cut: neighbour pairs "
             "whose particles are on different ranks, at each repartition (the partition of the interval that "
             "ends), mean over the repartitions. Partition time: simulated seconds in Zoltan_LB_Partition on the "
             "rank that arrived last (its messages over the modelled network; the computation is charged as RCB's "
             "for every partitioner), then the real seconds this machine spent in it (all ranks on one core "
             "under SMPI). Every partitioner registers the exact ghost set (solver/domain/ghosts.c; before commit f028d1e "
             "RCB used its part boxes, up to twice the ghosts).", ""]
    if note:
        lines += [note, ""]
    if missing:
        lines += [f"Not run (or failed) at this scale: {', '.join(missing)} (the same command with `--reuse` runs only "
                  "what is missing).", ""]
    for s in scenarios:
        lines += table(s, res, policies, parts)
    lines += ["## Does a graph or hypergraph partitioner beat RCB?", ""] + answer(res, scenarios, policies, parts) + [""]
    with open(os.path.join(out, "PARTITIONERS.md"), "w") as f:
        f.write("\n".join(lines))
    figure(res, scenarios, policies, parts, os.path.join(out, "partitioners.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="tiny")
    ap.add_argument("--out", default=os.path.join(TOP, "out", "partitioners"))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=SCENARIOS)
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=POLICIES)
    ap.add_argument("--partitioners", nargs="+", choices=PARTITIONERS, default=PARTITIONERS)
    ap.add_argument("--reuse", action="store_true", help="keep runs already in --out at this scale")
    ap.add_argument("--report-only", action="store_true", help="run nothing: the report of the runs in --out")
    ap.add_argument("--note", default="", help="a paragraph added under the scale line (what was left out and why)")
    a = ap.parse_args()
    if not os.access(a.demsim, os.X_OK):
        print(f"partitioners.py: {a.demsim}: not an executable demsim", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    runs = [(s, p, x) for s in a.scenarios for p in a.policies for x in a.partitioners]
    if a.report_only:
        res = {(s, p, x): collect(a.out, s, p, x, a.scale) for s, p, x in runs}
        report(a.out, a.scale, a.scenarios, a.policies, a.partitioners, res, a.note)
        print(f"partitioners.py: {os.path.join(a.out, 'PARTITIONERS.md')} from {sum(r is not None for r in res.values())} "
              f"of {len(runs)} runs")
        return 0
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, a.demsim, s, p, x, a.out, a.scale, a.reuse) for s, p, x in runs]
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            row = fut.result()
            r = collect(a.out, row["scenario"], row["policy"], row["partitioner"], a.scale)
            failed += r is None
            what = "FAILED" if r is None else "simulated %.4g s" % r["time"]
            print(f"[{i}/{len(runs)}] {row['scenario']} {row['policy']} {row['partitioner']}: {what} "
                  f"({'reused' if row['reused'] else '%.1f s wall' % row['wall_s']})", flush=True)
    res = {(s, p, x): collect(a.out, s, p, x, a.scale) for s, p, x in runs}
    report(a.out, a.scale, a.scenarios, a.policies, a.partitioners, res, a.note)
    print(f"partitioners.py: {os.path.join(a.out, 'PARTITIONERS.md')}, {os.path.join(a.out, 'partitioners.png')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
