#!/usr/bin/python3
"""Containers lost mid-run: the checkpoint interval against the failure rate, with Young and Daly.

    validation/study/failure.py [--scale tiny|study] [--out DIR] [--demsim PATH] [-j N]
                          [--mtbf S ...] [--intervals N ...] [--seeds K] [--report-only]

Runs case 1 (scenarios/case1.cfg, four containers, policy RW) with containers lost at a rate
(failure.mtbf, exponential, failure.seed = 1..K) for every checkpoint interval
(output.checkpoint_every, steps) and every MTBF; each lost container is restarted from the last
checkpoint on the survivors (scenarios/README.md, "A container lost mid-run"). The same seeds are
used at every interval, so the intervals meet the same draws. Writes DIR/FAILURE.md (per MTBF:
the mean total time of the run, its parts and the losses per interval; the best measured
interval against Young's tau = sqrt(2 C M) and Daly's higher-order form, C the checkpoint cost
measured in the runs, M the MTBF) and DIR/failure.png (mean total time against the interval,
one curve per MTBF, Young and Daly marked). DIR/runs.json keeps every run's figures; with
--report-only the report is written again from it. Each run's summary.json and failures.txt stay
in DIR/m<MTBF>-i<interval>-s<seed>/case1-RW/; its checkpoint and particle files are deleted.

Scales: tiny = 20,000 particles, 100 steps, a repartition every 10 (a few minutes);
study = 500,000 particles, 300 steps, a repartition every 50 (about forty minutes on 2 cores,
one run at a time).
Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import argparse
import concurrent.futures
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sweep import run_one  # noqa: E402

# particles, steps, repartition period, MTBFs (s), checkpoint intervals (steps)
SCALES = {"tiny": (20000, 100, 10, [0.15, 0.5], [5, 10, 25, 50]),
          "study": (500000, 300, 50, [6.0, 20.0], [25, 50, 100, 200])}
SCENARIO = os.path.join(TOP, "scenarios", "case1.cfg")


def young(c, m):
    return math.sqrt(2 * c * m)


def daly(c, m):
    """Daly (2006), the higher-order optimum: for C < 2M."""
    if c >= 2 * m:
        return m
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def nearest(intervals, x):
    return min(intervals, key=lambda i: abs(math.log(i / x)))


def run_args(scale, mtbf, interval, seed):
    n, steps, every, _, _ = SCALES[scale]
    return ["--particles", str(n), "--steps", str(steps), "--repartition-every", str(every),
            "--set", f"output.checkpoint_every={interval}", "--set", f"failure.mtbf={mtbf:g}",
            "--set", f"failure.seed={seed}"]


def one(demsim, out, scale, mtbf, interval, seed):
    rundir = os.path.join(out, f"m{mtbf:g}-i{interval}-s{seed}")
    row = run_one(demsim, SCENARIO, "RW", rundir, run_args(scale, mtbf, interval, seed))
    rec = {"mtbf": mtbf, "interval": interval, "seed": seed, "status": row["status"], "wall_s": row["wall_s"]}
    path = os.path.join(rundir, "case1-RW", "summary.json")
    for big in ("checkpoint.h5", "particles.h5"):  # 236 + 46 MB a run at the study scale
        if os.path.exists(os.path.join(rundir, "case1-RW", big)):
            os.remove(os.path.join(rundir, "case1-RW", big))
    if row["status"] == 0 and os.path.exists(path):
        with open(path) as f:
            s = json.load(f)
        fl = s["failure"]
        recomputed = sum(l["step"] - l["restarted_from_step"] for l in fl["losses"])
        rec.update({k: fl[k] for k in ("setup_s", "kept_s", "recompute_s", "restart_latency_s", "restart_setup_s",
                                       "lost_s", "total_s", "checkpoint_s", "checkpoint_cost_s", "checkpoints")})
        rec.update({"losses": len(fl["losses"]), "restart_latency": fl.get("restart_latency_parameter_s"), "steps": s["steps"], "recomputed_steps": recomputed,
                    "particles_end": s["particles_end"], "particles": s["particles"]})
    return rec


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def analyse(runs, mtbfs, intervals):
    """Per (MTBF, interval): the means over seeds; per MTBF: C, the step time, best, Young, Daly."""
    ok = [r for r in runs if r.get("total_s") is not None]
    # compute time per step: kept and recomputed loop time without the checkpoints, over the steps done
    step_s = mean([(r["kept_s"] + r["recompute_s"] - r["checkpoint_s"]) / (r["steps"] + r["recomputed_steps"])
                   for r in ok])
    points, best = {}, {}
    for m in mtbfs:
        for i in intervals:
            rs = [r for r in ok if r["mtbf"] == m and r["interval"] == i]
            if rs:
                points[(m, i)] = {k: mean([r[k] for r in rs]) for k in
                                  ("total_s", "lost_s", "recompute_s", "restart_latency_s", "restart_setup_s",
                                   "checkpoint_s", "losses", "checkpoint_cost_s")}
                points[(m, i)]["n"] = len(rs)
                points[(m, i)]["min"] = min(r["total_s"] for r in rs)
                points[(m, i)]["max"] = max(r["total_s"] for r in rs)
        done = [i for i in intervals if (m, i) in points]
        if not done:
            continue
        c = mean([r["checkpoint_cost_s"] for r in ok if r["mtbf"] == m and r["checkpoints"] > 0])
        b = min(done, key=lambda i: points[(m, i)]["total_s"])
        best[m] = {"C": c, "best": b, "best_s": b * step_s, "young_s": young(c, m), "daly_s": daly(c, m)}
    return points, best, step_s


def report(runs, scale, mtbfs, intervals, seeds, out, command):
    points, best, step_s = analyse(runs, mtbfs, intervals)
    n, steps, every, _, _ = SCALES[scale]
    failed = [r for r in runs if r.get("total_s") is None]
    conserved = all(r["particles_end"] == r["particles"] and r["steps"] == steps for r in runs if "steps" in r)
    wall = sum(r["wall_s"] for r in runs)
    L = ["# Containers lost mid-run: the checkpoint interval against the failure rate", "",
         f"Command: `{command}` ({len(runs)} runs one at a time, {wall / 60:.0f} minutes of wall time). "
         f"Scale `{scale}`: case 1 (four containers, RW), {n:,} particles, {steps} steps, a repartition every "
         f"{every}; containers lost at the rate 1/MTBF (exponential, seeds 1..{seeds}, the same seeds at every "
         "interval); each loss restarts the run from its last checkpoint on the survivors, one rank fewer; the "
         "last container is never lost. Restart latency (detection + re-launch) "
         f"{mean([r.get('restart_latency') for r in runs]):g} s (failure.restart_latency, ESTIMATE); checkpoints "
         "written at the containers' storage_bw (platforms/openstack.xml, ESTIMATE). Simulated times: a rerun "
         "gives the same tables.", "",
         f"Compute time per step (the runs' loop time without checkpoints, over the steps done, recomputed ones "
         f"included): {step_s * 1e3:.2f} ms. Every run that finished reached step {steps} with all its particles: "
         f"{'yes' if conserved else 'NO'}. Failed runs: {len(failed)}.", ""]
    for m in mtbfs:
        if m not in best:
            continue
        bm = best[m]
        L += [f"## MTBF {m:g} s", "",
              "| checkpoint every (steps) | (s of compute) | mean total (s) | min..max (s) | losses | recompute (s) | "
              "restart latency + set-up (s) | checkpoints (s) | runs |",
              "|---|---|---|---|---|---|---|---|---|"]
        for i in intervals:
            p = points.get((m, i))
            if not p:
                continue
            L.append(f"| {i}{' (best)' if i == bm['best'] else ''} | {i * step_s:.3g} | {p['total_s']:.4g} | "
                     f"{p['min']:.4g}..{p['max']:.4g} | {p['losses']:.2f} | {p['recompute_s']:.3g} | "
                     f"{p['restart_latency_s'] + p['restart_setup_s']:.3g} | {p['checkpoint_s']:.3g} | {p['n']} |")
        L += ["", f"Measured checkpoint cost C = {bm['C']:.3g} s (mean over the runs' checkpoints). Best measured "
              f"interval: {bm['best']} steps = {bm['best_s']:.3g} s of compute. Young: sqrt(2 C M) = "
              f"{bm['young_s']:.3g} s = {bm['young_s'] / step_s:.0f} steps; Daly: {bm['daly_s']:.3g} s = "
              f"{bm['daly_s'] / step_s:.0f} steps. The best measured interval is "
              f"{bm['best_s'] / bm['daly_s']:.2f} x Daly's; the interval of the grid nearest to Young's (on a log "
              f"scale) is {nearest(intervals, bm['young_s'] / step_s)} steps, to Daly's "
              f"{nearest(intervals, bm['daly_s'] / step_s)}.", ""]
    last = [i for i in intervals if steps % i == 0]
    L += ["## Reading", "",
          (f"Intervals that divide the {steps} steps ({', '.join(map(str, last))}) also write a checkpoint at the "
           "last step, which no loss can use: one C more in their totals than Young's and Daly's model counts. "
           if last else ""),
          "Young and Daly assume failures of a constant rate over a long run and a restart on the same resources. "
          "Here the run is a few times the MTBF, at most three containers can be lost, and each loss also slows the "
          "rest of the run (one container fewer, the 4-core one possibly among them), so the measured optimum is "
          "on a coarse grid of intervals and within the spread of a few seeds; the table's min..max column shows "
          "that spread.", ""]
    with open(os.path.join(out, "FAILURE.md"), "w") as f:
        f.write("\n".join(L))
    figure(points, best, step_s, mtbfs, intervals, os.path.join(out, "failure.png"))
    return 1 if failed else 0


def figure(points, best, step_s, mtbfs, intervals, path):
    """Top: the expected total time. Bottom: its part that the interval trades, checkpoint writing
    against recomputation (the restart latency is paid per loss, whatever the interval)."""
    import figures  # matplotlib, Agg backend
    fig, axes = figures.plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    for k, m in enumerate(mtbfs):
        xs = [i for i in intervals if (m, i) in points]
        if not xs:
            continue
        color = f"C{k}"
        axes[0].plot(xs, [points[(m, i)]["total_s"] for i in xs], "o-", color=color, label=f"MTBF {m:g} s")
        axes[0].fill_between(xs, [points[(m, i)]["min"] for i in xs], [points[(m, i)]["max"] for i in xs],
                             color=color, alpha=0.12)
        axes[1].plot(xs, [points[(m, i)]["checkpoint_s"] + points[(m, i)]["recompute_s"] for i in xs], "o-",
                     color=color, label=f"MTBF {m:g} s")
        if m in best:
            for ax in axes:
                ax.axvline(best[m]["young_s"] / step_s, color=color, ls=":",
                           label=f"Young, MTBF {m:g} s" if ax is axes[0] else None)
                ax.axvline(best[m]["daly_s"] / step_s, color=color, ls="--",
                           label=f"Daly, MTBF {m:g} s" if ax is axes[0] else None)
    axes[1].set_xscale("log")
    axes[1].minorticks_off()
    axes[1].set_xticks(intervals)
    axes[1].set_xticklabels([str(i) for i in intervals])
    axes[1].set_xlabel("checkpoint interval (steps)")
    axes[0].set_ylabel("expected total time (s, simulated)")
    axes[1].set_ylabel("checkpoint writing + recomputation (s)")
    axes[0].set_title("Case 1, containers lost at a rate (mean over seeds; band: min..max)")
    axes[0].legend(fontsize="small")
    figures._save(fig, os.path.dirname(path), os.path.basename(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="tiny")
    ap.add_argument("--out", default=os.path.join(TOP, "out", "failure"))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--mtbf", type=float, nargs="+", help="MTBFs, s (default: the scale's)")
    ap.add_argument("--intervals", type=int, nargs="+", help="checkpoint intervals, steps (default: the scale's)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--report-only", action="store_true", help="write the report again from DIR/runs.json")
    a = ap.parse_args()
    mtbfs = a.mtbf or SCALES[a.scale][3]
    intervals = sorted(a.intervals or SCALES[a.scale][4])
    if a.seeds < 1 or min(mtbfs) <= 0 or min(intervals) <= 0:
        print("failure.py: --seeds, --mtbf and --intervals must be positive", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    store = os.path.join(a.out, "runs.json")
    command = f"/usr/bin/python3 validation/study/failure.py --scale {a.scale} --seeds {a.seeds}" + \
        (f" --mtbf {' '.join(f'{m:g}' for m in a.mtbf)}" if a.mtbf else "") + \
        (f" --intervals {' '.join(map(str, a.intervals))}" if a.intervals else "") + f" --out {a.out}"
    if a.report_only:
        with open(store) as f:
            return report(json.load(f), a.scale, mtbfs, intervals, a.seeds, a.out, command)
    if not os.access(a.demsim, os.X_OK):
        print(f"failure.py: {a.demsim}: not an executable demsim", file=sys.stderr)
        return 2
    # seeds outermost: an interrupted sweep still has every point once
    todo = [(m, i, s) for s in range(1, a.seeds + 1) for m in mtbfs for i in intervals]
    runs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(one, a.demsim, a.out, a.scale, m, i, s) for m, i, s in todo]
        for k, fut in enumerate(futs, 1):
            r = fut.result()
            runs.append(r)
            with open(store, "w") as f:
                json.dump(runs, f, indent=1)
            print(f"[{k}/{len(todo)}] MTBF {r['mtbf']:g} s, every {r['interval']} steps, seed {r['seed']}: "
                  + (f"total {r['total_s']:.4g} s, {r['losses']} lost" if r.get("total_s") is not None else "FAILED")
                  + f" ({r['wall_s']:.0f} s wall)", flush=True)
    rc = report(runs, a.scale, mtbfs, intervals, a.seeds, a.out, command)
    print(f"failure.py: {os.path.join(a.out, 'FAILURE.md')}, {os.path.join(a.out, 'failure.png')}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
