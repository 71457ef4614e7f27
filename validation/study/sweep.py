#!/usr/bin/python3
"""Runs a set of scenarios x policies (x partitioners), in parallel on the local cores, and collects one CSV.

    validation/study/sweep.py scenarios/case5-stress*.cfg --policies NOW RW RUPER --out out/sweep-case5 \
        [--partitioners RCB HSFC] [-j 2] [--demsim build/smpi/demsim] [-- extra demsim options, e.g. --steps 2000]
    validation/study/sweep.py ... --slurm sweep.sbatch   # write a Slurm job array instead of running

Policies and partitioners are those `demsim keys` lists for run.policy and run.partitioner. The CSV
(OUT/sweep.csv) has one row per run: scenario, policy, partitioner, total simulated time, wall time,
lambda max/final, repartitions, the gain of the run over NOW for the same scenario (and
partitioner; gain_percent = (T_NOW - T) / T_NOW * 100) and where its time went (summary.json's
time_breakdown_s). It prints the winner of each scenario and the breakdowns side by side, and
draws OUT/sweep.png, a stacked bar of the breakdown per run. Each run's own outputs are in
OUT/<scenario>-<policy>[-<partitioner>]/.
"""
import argparse
import concurrent.futures
import csv
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import time

# Besides its own command line (main), this module holds what the study scripts share, in one place:
# one run and its summary (run_one, run_or_reuse, summary_of), the study command lines (study_args,
# policy_args) and job loops (run_jobs, run_study, run_policies, timers_job), the policy studies'
# scales, number format and bar figure (POLICY_SCALES, scale_args, fmt, bar_panels), and the
# statistics of repeated native runs (QUIET_SHARE, quiet, best_of, core_shares). It imports
# nothing from the scripts that use it.

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# The interpreter the tools need: Debian's, with its numpy and matplotlib (./setup.sh installs
# python3-numpy, python3-matplotlib, python3-h5py). Every study script imports this module (figures.py
# first thing), so a python3 without them stops here with what to run instead.
NEEDS = ("numpy", "matplotlib")


def check_interpreter():
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        print(f"{os.path.basename(sys.argv[0])}: this python ({sys.executable}) has no {' or '.join(missing)}; the "
              "tools need Debian's /usr/bin/python3 with python3-numpy and python3-matplotlib (./setup.sh installs "
              f"them): run `/usr/bin/python3 {sys.argv[0]} ...` or the script itself", file=sys.stderr)
        sys.exit(2)


check_interpreter()


def run_one(demsim, scenario, policy, outdir, extra, partitioner=None):
    name = os.path.splitext(os.path.basename(scenario))[0]
    rundir = os.path.join(outdir, f"{name}-{policy}" + (f"-{partitioner}" if partitioner else ""))
    part = ["--set", f"run.partitioner={partitioner}"] if partitioner else []
    cmd = [demsim, "run", scenario, "--policy", policy, "--out", rundir, "--quiet"] + part + extra
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t0
    os.makedirs(rundir, exist_ok=True)
    with open(os.path.join(rundir, "demsim.log"), "w") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + p.stdout)
    row = {"scenario": name, "policy": policy, "status": p.returncode, "wall_s": round(wall, 3), "dir": rundir}
    summary = os.path.join(rundir, "summary.json")
    if p.returncode == 0 and os.path.exists(summary):
        with open(summary) as f:
            s = json.load(f)
        row.update({k: s.get(k) for k in ("particles", "steps", "ranks", "sim_time_s", "lambda_max_percent",
                                          "lambda_final_percent", "repartitions", "partitioner")})
        row.update({k: v for k, v in s.get("time_breakdown_s", {}).items()})
        row["summary"] = s
    return row


# --- who won and why: summary.json's time_breakdown_s, side by side --------------------------
# (key, label): the parts of time_breakdown_s, in the order of a run (they sum to total_s)
BREAKDOWN = [("setup_s", "set-up"), ("compute_s", "computing"), ("ghost_wait_s", "ghost exchange: wait"),
             ("ghost_comm_s", "ghost exchange: comm."), ("repartition_s", "repartitions"),
             ("migration_s", "migration"), ("checkpoint_s", "checkpoints"), ("output_s", "output"),
             ("other_s", "rest of the loop"), ("earlier_attempts_s", "earlier attempts (lost containers)")]


def solver_choices(demsim):
    """{"run.policy": [...], "run.partitioner": [...]} as `demsim keys` lists them (the solver's own
    tables), or {} when demsim cannot say."""
    import re
    try:
        out = subprocess.run([demsim, "keys"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(run\.policy|run\.partitioner)\s.*\(([A-Z0-9|]+)\)\s*$", line)
        if m:
            found[m.group(1)] = m.group(2).split("|")
    return found


def check_choices(ap, demsim, key, option, asked):
    """ap.error (exit 2) when a value of option is not one the solver has for key."""
    known = solver_choices(demsim).get(key)
    bad = [v for v in asked or [] if known and v not in known]
    if bad:
        ap.error(f"{option}: {', '.join(bad)} not among the solver's {key} ({', '.join(known)}; `demsim keys`)")


def breakdown_lines(labels, summaries):
    """The breakdown of each run (time_breakdown_s) side by side, as lines; labels name the columns."""
    w = max(len(l) for _, l in BREAKDOWN) + 8
    width = max([12] + [len(x) + 2 for x in labels])
    lines = ["where the time went (s)".ljust(w) + "".join(f"{x:>{width}}" for x in labels)]
    shown = [(k, l) for k, l in BREAKDOWN if any(s.get("time_breakdown_s", {}).get(k) for s in summaries)]
    for k, label in shown + [("total_s", "total (set-up included)")]:
        lines.append(f"  {label}".ljust(w) + "".join(f"{s.get('time_breakdown_s', {}).get(k, float('nan')):>{width}.4f}"
                                                      for s in summaries))
    return lines


def winner_lines(labels, summaries, reference=None):
    """The winner (least simulated loop time, sim_time_s), its gain over the reference (NOW when
    present, else the slowest) and the parts of the breakdown that made the difference."""
    t = [s["sim_time_s"] for s in summaries]
    i = min(range(len(t)), key=t.__getitem__)
    j = labels.index(reference) if reference in labels else max(range(len(t)), key=t.__getitem__)
    if i == j:
        return [f"winner: {labels[i]} ({t[i]:.4g} s simulated)"]
    gain = (t[j] - t[i]) / t[j] * 100.0
    bi, bj = summaries[i].get("time_breakdown_s", {}), summaries[j].get("time_breakdown_s", {})
    diffs = sorted(((bi.get(k, 0.0) - bj.get(k, 0.0), l) for k, l in BREAKDOWN), key=lambda d: d[0])
    why = ", ".join(f"{l} {d:+.3g} s" for d, l in diffs if abs(d) >= 0.01 * t[j])
    return [f"winner: {labels[i]}, {gain:.1f} % less simulated time than {labels[j]} ({t[i]:.4g} s against "
            f"{t[j]:.4g} s)", f"  why (rank 0, {labels[i]} - {labels[j]}): {why or 'no part differs by 1 % or more'}"]


def breakdown_bars(labels, summaries, title, path):
    """A stacked bar of each run's breakdown (time_breakdown_s), one bar per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels) + 3), 4.5))
    bottom = [0.0] * len(labels)
    for k, label in BREAKDOWN:
        v = [s.get("time_breakdown_s", {}).get(k, 0.0) for s in summaries]
        if any(v):
            ax.bar(range(len(labels)), v, 0.6, bottom=bottom, label=label)
            bottom = [b + x for b, x in zip(bottom, v)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_ylabel("simulated time (s), rank 0")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_or_reuse(demsim, scenario, policy, outdir, extra, resume=False):
    """run_one's run in outdir/<scenario>-<policy>/ (or, with resume, the one already there): its
    summary.json as a dict, or None when it failed."""
    name = os.path.splitext(os.path.basename(scenario))[0]
    path = os.path.join(outdir, f"{name}-{policy}", "summary.json")
    if not (resume and os.path.exists(path)):
        if run_one(demsim, scenario, policy, outdir, extra)["status"] != 0:
            return None
    return summary_of(outdir, name, policy)


def study_args(doc, scales, default_out):
    """The command line every study script shares: --scale, --out, --demsim, -j, --resume,
    --commit; checked (exit 2 with the option named)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(scales), default="tiny")
    ap.add_argument("--out", default=os.path.join(TOP, "out", default_out))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", type=int, default=1, help="runs in parallel (default 1)")
    ap.add_argument("--resume", action="store_true", help="reuse the runs DIR already holds (their summary.json)")
    ap.add_argument("--commit", help="the commit the runs' build was made from (named in the report)")
    a = ap.parse_args()
    if a.j < 1:
        ap.error("-j: expected at least 1")
    if not os.access(a.demsim, os.X_OK):
        ap.error(f"--demsim {a.demsim}: not an executable (build the SMPI preset first)")
    os.makedirs(a.out, exist_ok=True)
    return a


def run_jobs(a, todo, run_job, label):
    """Runs todo (tuples whose [1] is the run's name) through run_job(demsim, out, job, resume) ->
    (key, result or None), a.j at a time, printing each; returns ({key: result}, failures)."""
    res, failed = {}, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        for i, (key, r) in enumerate(ex.map(lambda j: run_job(a.demsim, a.out, j, a.resume), todo)):
            res[key] = r
            failed += r is None
            print(f"{label}: {i + 1}/{len(todo)} {todo[i][1]}: " + (f"{r['time']:.4g} s" if r else "FAILED"), flush=True)
    return res, failed



def summary_of(outdir, scenario, policy):
    """outdir/<scenario>-<policy>/summary.json as a dict, or None where there is none."""
    path = os.path.join(outdir, f"{scenario}-{policy}", "summary.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def commit_note(commit):
    """--commit's words in a study report ("" without it)."""
    return f" with the build of commit {commit}" if commit else ""


def timers_job(scenario, policy, figures):
    """A run_job for run_jobs: the job's run of scenario under policy (run_or_reuse), and
    figures(summary, rank 0's timers) -> its figures."""
    def run_job(demsim, out, job, resume=False):
        key, name, extra = job
        s = run_or_reuse(demsim, scenario, policy, os.path.join(out, name), extra, resume)
        return key, (None if s is None else figures(s, s["rank0_timers_s"]))
    return run_job


def run_study(doc, scales, name, jobs, run_job, write):
    """A sweep study's main (offload.py, sites.py): study_args, jobs(scale, out) run through
    run_job, write(args, results) -> the files it wrote (printed); the exit status."""
    a = study_args(doc, scales, name)
    res, failed = run_jobs(a, jobs(a.scale, a.out), run_job, f"{name}.py")
    print(f"{name}.py: {write(a, res)}")
    return 1 if failed else 0


# --- the policy studies (damping.py, ruper.py): scenarios x policies at one scale ------------
# (particles, steps, repartition every) at each scale
POLICY_SCALES = {"tiny": (20000, 100, 10), "study": (500000, 500, 50)}


def scale_args(scale):
    n, steps, every = POLICY_SCALES[scale]
    return ["--particles", str(n), "--steps", str(steps), "--repartition-every", str(every)]


def policy_args(doc, name, known, policies, jobs, keep=False):
    """The policy studies' command line: --scale, --out (out/NAME), --demsim, -j/--jobs (default
    jobs), [--keep], --scenarios (of known), --policies (of policies), --no-noise. None after saying what is
    wrong (exit status 2)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(POLICY_SCALES), default="tiny")
    ap.add_argument("--out", default=os.path.join(TOP, "out", name))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("-j", "--jobs", type=int, default=jobs)
    if keep:
        ap.add_argument("--keep", action="store_true", help="reuse the runs whose summary.json is already in DIR")
    ap.add_argument("--scenarios", nargs="+", help="a subset of the scenarios (names, without .cfg)")
    ap.add_argument("--policies", nargs="+", choices=policies, default=policies)
    ap.add_argument("--no-noise", action="store_true",
                    help="noise.enabled = false: the deterministic model (the case scenarios run with noise)")
    a = ap.parse_args()
    a.scenarios = a.scenarios or known
    bad = [s for s in a.scenarios if s not in known]
    if bad:
        print(f"{name}.py: unknown scenario(s) {', '.join(bad)}; known: {', '.join(known)}", file=sys.stderr)
        return None
    if not os.access(a.demsim, os.X_OK):
        print(f"{name}.py: {a.demsim}: not an executable demsim", file=sys.stderr)
        return None
    os.makedirs(a.out, exist_ok=True)
    return a


def run_policies(a, runs, scenario_file, collect):
    """Runs [(scenario, policy)] (run_one at a.scale), a.jobs at a time, printing a line each:
    scenario_file(scenario) is its file, collect(row) -> the run's figures or None.
    Returns ({(scenario, policy): figures}, failures)."""
    res, failed = {}, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        extra = scale_args(a.scale) + (["--set", "noise.enabled=false"] if getattr(a, "no_noise", False) else [])
        futs = [ex.submit(run_one, a.demsim, scenario_file(s), p, a.out, extra) for s, p in runs]
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            row = fut.result()
            r = collect(row)
            res[(row["scenario"], row["policy"])] = r
            failed += r is None
            print(f"[{i}/{len(runs)}] {row['scenario']} {row['policy']}: "
                  f"{'FAILED' if r is None else 'simulated %.4g s' % r['time']} ({row['wall_s']:.1f} s wall)", flush=True)
    return res, failed


def finish_policy_study(a, name, lines, md, png, draw, failed):
    """A policy study's end: lines into OUT/md, draw(OUT/png), both named; the exit status."""
    with open(os.path.join(a.out, md), "w") as f:
        f.write("\n".join(lines))
    draw(os.path.join(a.out, png))
    print(f"{name}.py: {os.path.join(a.out, md)}, {os.path.join(a.out, png)}")
    return 1 if failed else 0


def fmt(v, spec):
    return "-" if v is None or v != v else format(v, spec)


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


# --- statistics of repeated native runs (hardware.py and report.py) ---------------------------
# A run is quiet when the core watch found every core it used at QUIET_SHARE of the typical core
# or more (core_shares): a neighbour on the host slows one of this VM's cores for minutes at a time
# (to 0.66 of its speed in checks of 2026-12-05), and a run on such a core measures the neighbour.
QUIET_SHARE = 0.95


def quiet(run, typical):
    """Whether the core watch saw every core of the run at QUIET_SHARE or more (a run without a
    watch counts as quiet: nothing says otherwise)."""
    shares = core_shares(run, typical)
    return not shares or min(shares.values()) >= QUIET_SHARE


def best_of(runs, typical=None):
    """The median run by total time: on a shared machine the fastest run can be an outlier too (the
    scheduler moves other users' processes between cores), so the median is kept, the spread
    reported. With the check's typical core time, the median of the quiet runs (all of them when
    none is)."""
    calm = [r for r in runs if quiet(r, typical)] if typical else []
    ordered = sorted(calm or runs, key=lambda s: s["sim_time_s"])
    return ordered[(len(ordered) - 1) // 2]


def core_shares(run, typical, key="_cores"):
    """{cpu: share} of a run's cores (key "_cores_mem": of their memory): the typical time over the
    core's mean time around the run, at most 1."""
    if not typical:
        return {}
    return {int(c): min(1.0, typical / (sum(v) / len(v))) for c, v in run.get(key, {}).items()}


def split_extra(argv):
    """(the script's own arguments, the demsim options after `--`)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def write_slurm(a, runs, extra):
    """A Slurm job array of the runs, one task each."""
    with open(a.slurm, "w") as f:
        f.write("#!/bin/bash\n")
        f.write(f"#SBATCH --job-name=demsim-sweep\n#SBATCH --array=0-{len(runs) - 1}\n#SBATCH --ntasks=1\n")
        f.write(f"#SBATCH --output={os.path.abspath(a.out)}/slurm-%A_%a.out\n")
        f.write("runs=(\n")
        for s, p, part in runs:
            name = os.path.splitext(os.path.basename(s))[0]
            args = [os.path.abspath(a.demsim), "run", os.path.abspath(s), "--policy", p, "--out",
                    os.path.join(os.path.abspath(a.out), f"{name}-{p}" + (f"-{part}" if part else "")), "--quiet"]
            args += (["--set", f"run.partitioner={part}"] if part else []) + extra
            f.write("  " + shlex.quote(" ".join(shlex.quote(x) for x in args)) + "\n")
        f.write(")\neval \"${runs[$SLURM_ARRAY_TASK_ID]}\"\n")
    print(f"sweep.py: wrote {a.slurm} ({len(runs)} array tasks); collect with the same command without --slurm "
          "after the jobs end, or read each run's summary.json")


def run_all(a, runs, extra):
    """The runs, a.jobs at a time, a line each; the rows."""
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, a.demsim, s, p, a.out, extra, part) for s, p, part in runs]
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            r = fut.result()
            r["partitioner_asked"] = runs[futs.index(fut)][2] or ""
            rows.append(r)
            state = "ok" if r["status"] == 0 else f"FAILED (exit {r['status']}, see {r['dir']}/demsim.log)"
            print(f"[{i}/{len(runs)}] {r['scenario']} {r['policy']} {r['partitioner_asked']}: {state} "
                  f"{'' if r['status'] else 'simulated %.4g s' % r['sim_time_s']} ({r['wall_s']:.1f} s wall)", flush=True)
    return rows


def report(a, rows):
    """Per scenario (and partitioner): the winner, its gain and the breakdowns side by side; the
    bar figure of every run's breakdown. Returns the figure's path (None without a finished run)."""
    done = [r for r in rows if r["status"] == 0 and "summary" in r]
    for key in dict.fromkeys((r["scenario"], r["partitioner_asked"]) for r in done):
        group = [r for r in done if (r["scenario"], r["partitioner_asked"]) == key]
        labels = [r["policy"] for r in group]
        print(f"\n{key[0]}" + (f", partitioner {key[1]}" if key[1] else "") + ":")
        print("\n".join(winner_lines(labels, [r["summary"] for r in group], "NOW")))
        print("\n".join(breakdown_lines(labels, [r["summary"] for r in group])))
    if not done:
        return None
    png = os.path.join(a.out, "sweep.png")
    labels = [f"{r['scenario']} {r['policy']}" + (f" {r['partitioner_asked']}" if r["partitioner_asked"] else "")
              for r in done]
    breakdown_bars(labels, [r["summary"] for r in done], "where the simulated time went (rank 0)", png)
    return png


def main():
    argv, extra = split_extra(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--policies", nargs="+", default=["NOW", "RW"], help="any run.policy of `demsim keys`")
    ap.add_argument("--partitioners", nargs="+", help="any run.partitioner of `demsim keys` (default: the scenario's)")
    ap.add_argument("--out", default="out/sweep")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("--slurm", metavar="FILE", help="write a Slurm job-array script instead of running")
    a = ap.parse_args(argv)
    check_choices(ap, a.demsim, "run.policy", "--policies", a.policies)
    check_choices(ap, a.demsim, "run.partitioner", "--partitioners", a.partitioners)
    for s in a.scenarios:
        if not os.path.isfile(s):
            print(f"sweep.py: {s}: no such scenario file", file=sys.stderr)
            return 2
    runs = [(s, p, part) for s in a.scenarios for part in (a.partitioners or [None]) for p in a.policies]
    os.makedirs(a.out, exist_ok=True)
    if a.slurm:
        write_slurm(a, runs, extra)
        return 0
    rows = run_all(a, runs, extra)
    now = {(r["scenario"], r["partitioner_asked"]): r.get("sim_time_s") for r in rows
           if r["policy"] == "NOW" and r["status"] == 0}
    for r in rows:
        t, t0 = r.get("sim_time_s"), now.get((r["scenario"], r["partitioner_asked"]))
        r["gain_percent"] = round((t0 - t) / t0 * 100.0, 3) if t and t0 else ""
    order = {p: i for i, p in enumerate(a.policies)}
    rows.sort(key=lambda r: (r["scenario"], r["partitioner_asked"], order[r["policy"]]))
    fields = ["scenario", "policy", "partitioner", "status", "particles", "steps", "ranks", "sim_time_s", "wall_s",
              "lambda_max_percent", "lambda_final_percent", "repartitions", "gain_percent"]
    fields += [k for k, _ in BREAKDOWN] + ["total_s"]
    path = os.path.join(a.out, "sweep.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    png = report(a, rows)
    print(f"\nsweep.py: {path}" + (f", figure: {png}" if png else ""))
    return 0 if all(r["status"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
