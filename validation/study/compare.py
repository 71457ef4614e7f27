#!/usr/bin/python3
"""Runs one scenario under several load-balancing policies and shows them side by side.

    validation/study/compare.py scenarios/default.cfg                      # NOW and RW (the Quick start)
    validation/study/compare.py scenarios/case5-stress1.cfg --policies NOW RW RW5 --out out/c5 \\
        -- --particles 200000 --steps 400 --repartition-every 40

Each policy runs with `demsim run SCENARIO --policy P --out OUT/P` (plus the options after
`--`), one after the other, with a progress line. Then it prints a table (simulated total time,
load imbalance lambda at its largest and at the end, repartitions, the gain over NOW, wall time,
each container's share of the particles at the end) and writes OUT/compare.png: lambda over
simulated time for every policy, the elapsed simulated time per step, and each container's
computational load per step under each policy. Then the winner, its gain, and where each
policy's time went (summary.json's time_breakdown_s: set-up, computing, ghost wait and
communication, repartitions, migration, checkpoints, output), side by side and as a bar figure
(OUT/breakdown.png). Policies and --partitioner: any `demsim keys` lists. Exit status: 0, or that
of the first run that failed (2: bad input).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import figures  # noqa: E402  (matplotlib, Agg backend)
import sweep  # noqa: E402
from figures import plt  # noqa: E402

def run_policy(demsim, scenario, policy, rundir, extra, env=None):
    """Runs demsim (in env, default this process's environment), showing its progress on one line;
    returns (exit status, wall seconds)."""
    cmd = [demsim, "run", scenario, "--policy", policy, "--out", rundir] + extra
    os.makedirs(rundir, exist_ok=True)
    tty = sys.stdout.isatty()
    t0 = time.time()
    with open(os.path.join(rundir, "demsim.log"), "w") as log:
        log.write(" ".join(cmd) + "\n")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env)
        last = ""
        for line in p.stdout:
            log.write(line)
            for part in line.rstrip("\n").split("\r"):
                if part.startswith("step "):
                    last = f"  {policy:<4} {part.strip()}"
                    if tty:
                        print("\r" + last[:110].ljust(110), end="", flush=True)
        rc = p.wait()
    wall = time.time() - t0
    if tty:
        print("\r" + " " * 110 + "\r", end="")
    print(f"  {policy:<4} {'done' if rc == 0 else f'FAILED (exit {rc})'} in {wall:.0f} s wall"
          + (f": {last.strip()}" if rc == 0 and last and not tty else ""), flush=True)
    if rc != 0:
        with open(os.path.join(rundir, "demsim.log")) as f:
            tail = f.readlines()[-8:]
        sys.stderr.write("".join("    | " + t for t in tail))
    return rc, wall


def table(runs, walls):
    """The side-by-side table, as lines."""
    pols = list(runs)
    s = {p: runs[p]["summary"] for p in pols}
    t_now = s["NOW"]["sim_time_s"] if "NOW" in s else None
    rows = [("simulated total time (s)", lambda p: f"{s[p]['sim_time_s']:.3f}"),
            ("lambda max (%)", lambda p: f"{s[p]['lambda_max_percent']:.1f}"),
            ("lambda final (%)", lambda p: f"{s[p]['lambda_final_percent']:.1f}"),
            ("repartitions", lambda p: f"{s[p]['repartitions']}"),
            ("gain over NOW (%)", lambda p: "-" if p == "NOW" or not t_now
             else f"{(t_now - s[p]['sim_time_s']) / t_now * 100.0:.1f}"),
            ("wall time (s)", lambda p: f"{walls[p]:.0f}")]
    first = s[pols[0]]
    hosts = [r["host"] for r in first["per_rank"]]
    for j, h in enumerate(hosts):
        rows.append((f"particles at the end, {h}",
                     lambda p, j=j: f"{s[p]['per_rank'][j]['particles'] / max(s[p]['particles_end'], 1) * 100:.1f} %"))
    w = max(len(r[0]) for r in rows) + 2
    lines = [" " * w + "".join(f"{p:>12}" for p in pols)]
    lines += [label.ljust(w) + "".join(f"{fn(p):>12}" for p in pols) for label, fn in rows]
    return lines


def plot(runs, title, path):
    """Top: lambda over simulated time and the simulated clock per step, every policy; bottom:
    each container's computational load per step, one panel per policy (same scale)."""
    pols = list(runs)
    cols = max(2, len(pols))
    fig, axes = plt.subplots(2, cols, figsize=(5.6 * cols, 8.0), squeeze=False)
    ax_l, ax_t = axes[0, 0], axes[0, 1]
    for p in pols:
        m = runs[p]["m"]
        style = figures.POLICY_STYLE.get(p, dict(color="tab:gray", ls="-"))
        ax_l.plot(m.time, m.lam, label=p, marker=".", ms=3, **style)
        figures._mark_repartitions(ax_l, m, m.time, style["color"])
        ax_t.plot(m.steps, m.time, label=f"{p} (run total {runs[p]['summary']['sim_time_s']:.3g} s)", **style)
    ax_l.set(xlabel="simulated time (s)", ylabel="load imbalance λ (%)",
             title="imbalance λ = L_max / L_avg - 1 (dotted: repartitions)")
    ax_t.set(xlabel="time step", ylabel="simulated clock (s)", title="simulated time (set-up included)")
    for ax in axes[0, 2:]:
        ax.axis("off")
    ymax = 0.0
    for ax, p in zip(axes[1], pols):
        m = runs[p]["m"]
        for j in range(m.ranks):
            ax.step(m.steps, m.load[:, j] / m.dsteps * 1e3, where="pre", label=m.hosts[j])
        ymax = max(ymax, ax.get_ylim()[1])
        ax.set(xlabel="time step", ylabel="computational load per step (ms)", title=f"{p}: load of each container")
    for ax in axes[1, len(pols):]:
        ax.axis("off")
    for ax in list(axes[0, :2]) + list(axes[1, :len(pols)]):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[1, :len(pols)]:
        ax.set_ylim(0, ymax)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=figures.DPI)
    plt.close(fig)


def main():
    argv, extra = sweep.split_extra(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--policies", nargs="+", default=["NOW", "RW"], help="any run.policy of `demsim keys`")
    ap.add_argument("--partitioner", help="any run.partitioner of `demsim keys` (default: the scenario's)")
    ap.add_argument("--out", default=os.path.join("out", "compare"))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    a = ap.parse_args(argv)
    sweep.check_choices(ap, a.demsim, "run.policy", "--policies", a.policies)
    sweep.check_choices(ap, a.demsim, "run.partitioner", "--partitioner", [a.partitioner] if a.partitioner else [])
    if a.partitioner:
        extra = ["--set", f"run.partitioner={a.partitioner}"] + extra
    if not os.path.isfile(a.scenario):
        print(f"compare.py: {a.scenario}: no such scenario file", file=sys.stderr)
        return 2
    if not os.access(a.demsim, os.X_OK):
        print(f"compare.py: {a.demsim}: no demsim there (build it first: README)", file=sys.stderr)
        return 2
    pols = list(dict.fromkeys(a.policies))
    print(f"compare.py: {a.scenario} under {', '.join(pols)}"
          + (f" ({' '.join(extra)})" if extra else "") + f"; outputs in {a.out}/", flush=True)
    walls = {}
    for p in pols:
        rc, walls[p] = run_policy(a.demsim, a.scenario, p, os.path.join(a.out, p), extra)
        if rc != 0:
            return rc
    runs = figures.load_runs(a.out, pols)
    missing = [p for p in pols if p not in runs]
    if missing:
        print(f"compare.py: no summary.json/metrics.csv for {', '.join(missing)} in {a.out}", file=sys.stderr)
        return 1
    s0 = runs[pols[0]]["summary"]
    head = (f"{s0.get('scenario', '?')}: {s0['particles']} particles, {s0['steps']} steps, "
            f"{s0['ranks']} containers ({', '.join(r['host'] for r in s0['per_rank'])})")
    print("\n" + head)
    print("\n".join(table(runs, walls)))
    summaries = [runs[p]["summary"] for p in pols]
    print()
    print("\n".join(sweep.winner_lines(pols, summaries, "NOW")))
    print("\n".join(sweep.breakdown_lines(pols, summaries)))
    png = os.path.join(a.out, "compare.png")
    plot(runs, head, png)
    bars = os.path.join(a.out, "breakdown.png")
    sweep.breakdown_bars(pols, summaries, f"{head}: where the simulated time went (rank 0)", bars)
    print(f"\nfigure: {os.path.abspath(png)}")
    print(f"breakdown figure: {os.path.abspath(bars)}")
    print(f"each run's outputs (summary.json, metrics.csv, particles.h5/.xmf): {os.path.abspath(a.out)}/<policy>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
