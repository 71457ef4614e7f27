#!/usr/bin/python3
"""Runs a set of scenarios x policies (x partitioners), in parallel on the local cores or as a Slurm job array, and collects one CSV.

    validation/study/sweep.py scenarios/case5-stress*.cfg --policies NOW RW RUPER --out out/sweep-case5 \
        [--partitioners RCB HSFC] [-j 2] [--demsim build/smpi/demsim] [-- extra demsim options, e.g. --steps 2000]
    validation/study/sweep.py ... --submit [--sbatch '--partition=batch --time=30:00']   # on Slurm, then the same CSV
    validation/study/sweep.py ... --submit --no-wait     # submit only; later the same command with --collect
    validation/study/sweep.py ... --slurm sweep.sbatch   # write the job-array script only (sbatch it yourself)

Policies and partitioners are those `demsim keys` lists for run.policy and run.partitioner. The CSV
(OUT/sweep.csv) has one row per run: scenario, policy, partitioner, total simulated time, wall time,
lambda max/final, repartitions, the gain of the run over NOW for the same scenario (and
partitioner; gain_percent = (T_NOW - T) / T_NOW * 100) and where its time went (summary.json's
time_breakdown_s). It prints the winner of each scenario and the breakdowns side by side, and
draws OUT/sweep.png, a stacked bar of the breakdown per run. Each run's own outputs are in
OUT/<scenario>-<policy>[-<partitioner>]/.

On Slurm (--submit), each run is one task of a job array (OUT/slurm/sweep.sbatch, its runs in
OUT/slurm/sweep.json, each task's output in OUT/slurm/sweep-JOB_TASK.out): the task runs this
script as `sweep.py --task OUT/slurm/sweep.json TASK`, which makes the run as a local run does and
leaves its row in the run's folder (task.json: status, wall time, job, task, node). sweep.py waits
until Slurm lists no task of the array, then reads the rows and writes the same CSV, report and
figure as a local sweep (a run without a row: status "no result"). The nodes must see the same
paths (demsim, the scenarios, OUT): a shared file system. A test Slurm on this machine:
validation/slurm/slurm_local.sh up.
"""
import argparse
import concurrent.futures
import csv
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

# Besides its own command line (main), this module holds what the study scripts share, in one place:
# one run and its summary (run_one, run_or_reuse, summary_of), the study command lines (study_args,
# policy_args) and job loops (run_jobs, run_study, run_policies, timers_job), the policy studies'
# scales, number format and bar figure (POLICY_SCALES, scale_args, fmt, bar_panels), the
# statistics of repeated native runs (QUIET_SHARE, quiet, best_of, core_shares), and runs as a Slurm
# job array (slurm_args, run_spec, slurm_runs). It imports nothing from the scripts that use it.

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


if sys.argv[1:2] != ["--task"]:  # a job-array task (run_task) needs no numpy on the node
    check_interpreter()


def run_dir(outdir, scenario, policy, partitioner=None):
    """A run's own folder: OUT/<scenario>-<policy>[-<partitioner>]/."""
    name = os.path.splitext(os.path.basename(scenario))[0]
    return os.path.join(outdir, f"{name}-{policy}" + (f"-{partitioner}" if partitioner else ""))


def run_one(demsim, scenario, policy, outdir, extra, partitioner=None):
    """One `demsim run` into run_dir(...), its output in demsim.log there; the row: scenario,
    policy, status, wall_s, dir, and (with_summary) the summary's figures."""
    name = os.path.splitext(os.path.basename(scenario))[0]
    rundir = run_dir(outdir, scenario, policy, partitioner)
    part = ["--set", f"run.partitioner={partitioner}"] if partitioner else []
    cmd = [demsim, "run", scenario, "--policy", policy, "--out", rundir, "--quiet"] + part + extra
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t0
    os.makedirs(rundir, exist_ok=True)
    with open(os.path.join(rundir, "demsim.log"), "w") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + p.stdout)
    return with_summary({"scenario": name, "policy": policy, "status": p.returncode, "wall_s": round(wall, 3),
                         "dir": rundir})


def with_summary(row):
    """row with its run's summary.json (row["summary"]) and the figures of it the tables show,
    when the run ended well."""
    summary = os.path.join(row["dir"], "summary.json")
    if row["status"] == 0 and os.path.exists(summary):
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


# --- Slurm: the same runs as one job array, one run a task ------------------------------------
# sweep.py --submit and run_validation.py --submit hand their runs to Slurm instead of running them
# here. The runs' descriptions go to OUT/slurm/NAME.json (the batch), and OUT/slurm/NAME.sbatch is a
# job array whose task i runs the batch's i-th run with `sweep.py --task OUT/slurm/NAME.json i` on
# the node Slurm picks: run_one, so the same run folder and demsim.log as a local run, and the row
# in the run's folder as task.json with the job, the task and the node. Once the array has ended,
# slurm_rows reads the rows back and completes them from the summaries as a local run does
# (with_summary), so the tables and figures come from the same code. The nodes need the paths of
# the submitting machine (demsim, the scenarios, OUT): a shared file system, as for any array.
TASK_ROW = "task.json"
SLURM_POLL_S = 3.0


def run_spec(demsim, scenario, policy, outdir, extra, partitioner=None):
    """One run of a batch: run_one's arguments, paths made absolute."""
    return dict(demsim=os.path.abspath(demsim), scenario=os.path.abspath(scenario), policy=policy,
                outdir=os.path.abspath(outdir), extra=list(extra), partitioner=partitioner)


def slurm_args(ap):
    """--submit and --sbatch, the Slurm options every script that can submit shares."""
    ap.add_argument("--submit", action="store_true",
                    help="run on Slurm: one job-array task a run (sbatch), wait for the array, collect the results "
                         "as a local run would (needs sbatch and squeue, and the paths shared with the nodes)")
    ap.add_argument("--sbatch", default="", metavar="OPTIONS",
                    help="more sbatch options for the array, one string, e.g. '--partition=batch --time=30:00'")


def slurm_check(ap, a):
    """ap.error (exit 2) for --sbatch without --submit, or --submit without Slurm's client."""
    if a.sbatch and not a.submit:
        ap.error("--sbatch: only with --submit")
    missing = [t for t in ("sbatch", "squeue") if a.submit and not shutil.which(t)]
    if missing:
        ap.error(f"--submit: no {' or '.join(missing)} on PATH: Slurm's client is needed (apt-get install slurm-client; "
                 "a test Slurm on this machine: validation/slurm/slurm_local.sh up)")


def write_batch(name, specs, slurm_dir, script=None, throttle=None):
    """Writes the batch (slurm_dir/NAME.json) and its job-array script (script, default
    slurm_dir/NAME.sbatch), removing the runs' earlier task rows; returns the script's path."""
    slurm_dir = os.path.abspath(slurm_dir)
    os.makedirs(slurm_dir, exist_ok=True)
    batch = os.path.join(slurm_dir, f"{name}.json")
    with open(batch, "w") as f:
        json.dump({"name": name, "job": None, "runs": specs}, f, indent=1)
    for r in specs:
        row = os.path.join(run_dir(r["outdir"], r["scenario"], r["policy"], r["partitioner"]), TASK_ROW)
        if os.path.exists(row):
            os.remove(row)
    script = os.path.abspath(script or os.path.join(slurm_dir, f"{name}.sbatch"))
    with open(script, "w") as f:
        f.write("#!/bin/bash\n")
        f.write(f"#SBATCH --job-name=demsim-{name}\n")
        f.write(f"#SBATCH --array=0-{len(specs) - 1}" + (f"%{throttle}" if throttle else "") + "\n")
        f.write(f"#SBATCH --ntasks=1\n#SBATCH --output={slurm_dir}/{name}-%A_%a.out\n")
        f.write(f"# validation/study/sweep.py: task i runs the i-th run of {batch} ({len(specs)} runs)\n")
        f.write(f"exec {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} --task "
                f"{shlex.quote(batch)} \"$SLURM_ARRAY_TASK_ID\"\n")
    return script


def run_task(batch, index):
    """`sweep.py --task BATCH I` (a job-array task): run_one of the batch's I-th run, its row
    (without the summary) with the job, the task and the node in the run's folder as task.json;
    exit status 0 when the run ended well."""
    with open(batch) as f:
        r = json.load(f)["runs"][int(index)]
    row = run_one(r["demsim"], r["scenario"], r["policy"], r["outdir"], r["extra"], r["partitioner"])
    row = {k: row[k] for k in ("scenario", "policy", "status", "wall_s", "dir")}
    row["slurm"] = dict(job=os.environ.get("SLURM_ARRAY_JOB_ID"), task=int(index),
                        node=os.environ.get("SLURMD_NODENAME") or os.uname().nodename)
    path = os.path.join(row["dir"], TASK_ROW)
    with open(path + ".part", "w") as f:
        json.dump(row, f)
    os.replace(path + ".part", path)  # whole or absent: the collector may look at any time
    return 0 if row["status"] == 0 else 1


def slurm_tool(cmd):
    """A Slurm client command's output; exits 2 when the client is missing or the command fails."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    except FileNotFoundError:
        print(f"{os.path.basename(sys.argv[0])}: --submit: no `{cmd[0]}`: Slurm's client is needed (apt-get install "
              "slurm-client; on this machine, a test Slurm: validation/slurm/slurm_local.sh up)", file=sys.stderr)
        sys.exit(2)
    if p.returncode:
        print(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited with {p.returncode}: {p.stderr.strip()}",
              file=sys.stderr)
        sys.exit(2)
    return p.stdout


def submit_batch(slurm_dir, name, script, sbatch=""):
    """sbatch the array; records its job id in the batch; returns it."""
    job = slurm_tool(["sbatch", "--parsable"] + shlex.split(sbatch) + [script]).strip().split(";")[0]
    batch = os.path.join(os.path.abspath(slurm_dir), f"{name}.json")
    with open(batch) as f:
        b = json.load(f)
    b["job"] = job
    with open(batch, "w") as f:
        json.dump(b, f, indent=1)
    print(f"{os.path.basename(sys.argv[0])}: submitted {script}: job {job}, {len(b['runs'])} array tasks", flush=True)
    return job


def job_alive(job):
    """Whether Slurm still lists a task of the job (None when squeue does not answer)."""
    try:
        p = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode:  # a job the controller has forgotten has ended
        return False if "Invalid job id" in p.stderr else None
    return bool(p.stdout.strip())


def task_row(spec, job=None):
    """The row a task left (task.json), or None (none yet, or one of another job)."""
    path = os.path.join(run_dir(spec["outdir"], spec["scenario"], spec["policy"], spec["partitioner"]), TASK_ROW)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        row = json.load(f)
    return row if job is None or row.get("slurm", {}).get("job") in (None, job) else None


def wait_array(specs, job, poll=SLURM_POLL_S):
    """Until Slurm lists no task of the job: a line per run as its row appears. Exits 2 when squeue
    has not answered for two minutes."""
    seen, silent, who = set(), 0.0, os.path.basename(sys.argv[0])
    while True:
        alive = job_alive(job)
        for i, spec in enumerate(specs):
            row = None if i in seen else task_row(spec, job)
            if row:
                seen.add(i)
                state = "ok" if row["status"] == 0 else f"FAILED (exit {row['status']}, see {row['dir']}/demsim.log)"
                print(f"[{len(seen)}/{len(specs)}] {os.path.basename(row['dir'])}: {state} (task {row['slurm']['task']} "
                      f"on {row['slurm']['node']}, {row['wall_s']:.1f} s wall)", flush=True)
        if alive is False:
            return
        silent = silent + poll if alive is None else 0.0
        if silent > 120:
            print(f"{who}: squeue has not answered for two minutes; job {job} may go on: collect later", file=sys.stderr)
            sys.exit(2)
        time.sleep(poll)


def slurm_rows(specs, slurm_dir, name, job=None):
    """The rows of the batch's runs, in order, as run_one gives them locally: each task's row with
    its summary; a run without one has status "no result" (its Slurm output named)."""
    rows = []
    for i, spec in enumerate(specs):
        row = task_row(spec, job)
        if row is None:
            out = os.path.join(os.path.abspath(slurm_dir), f"{name}-{job or '*'}_{i}.out")
            print(f"{os.path.basename(sys.argv[0])}: task {i} ({os.path.basename(spec['scenario'])} {spec['policy']}) "
                  f"left no result (cancelled, out of time, or failed before its run); Slurm's output, if it started: {out}",
                  file=sys.stderr)
            row = {"scenario": os.path.splitext(os.path.basename(spec["scenario"]))[0], "policy": spec["policy"],
                   "status": "no result", "wall_s": None,
                   "dir": run_dir(spec["outdir"], spec["scenario"], spec["policy"], spec["partitioner"])}
        rows.append(with_summary(row))
    return rows


def slurm_runs(a, name, specs, slurm_dir, throttle=None):
    """--submit: the runs as one job array (throttle: at most that many at once), waited for; their
    rows in order (slurm_rows). No runs, no job."""
    if not specs:
        return []
    script = write_batch(name, specs, slurm_dir, throttle=throttle)
    job = submit_batch(slurm_dir, name, script, a.sbatch)
    wait_array(specs, job)
    return slurm_rows(specs, slurm_dir, name, job)


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


def collected_job(slurm_dir, specs):
    """--collect: the job id the batch of these runs was submitted as (None when it was submitted
    by hand); exits 2 when OUT holds no batch, another one, or the job is still listed."""
    path = os.path.join(slurm_dir, "sweep.json")
    if not os.path.exists(path):
        print(f"sweep.py: --collect: no {path}: nothing was submitted into this --out (--submit or --slurm first)",
              file=sys.stderr)
        sys.exit(2)
    with open(path) as f:
        b = json.load(f)
    if b["runs"] != specs:
        print(f"sweep.py: --collect: {path} holds other runs ({len(b['runs'])}) than this command's ({len(specs)}): "
              "collect with the scenarios, policies, partitioners and options that submitted them", file=sys.stderr)
        sys.exit(2)
    if b["job"] and job_alive(b["job"]):
        print(f"sweep.py: --collect: job {b['job']} is still running (squeue -j {b['job']}); collect once it has ended",
              file=sys.stderr)
        sys.exit(2)
    return b["job"]


def sweep_rows(a, runs, extra):
    """The runs' rows: run here (run_all), as a Slurm job array (--submit) or collected from one
    (--collect); None after --slurm or --no-wait (nothing to tabulate yet)."""
    if not (a.slurm or a.submit or a.collect):
        return run_all(a, runs, extra)
    slurm_dir = os.path.abspath(os.path.join(a.out, "slurm"))
    specs = [run_spec(a.demsim, s, p, a.out, extra, part) for s, p, part in runs]
    if a.collect:
        job = collected_job(slurm_dir, specs)
    else:
        script = write_batch("sweep", specs, slurm_dir, a.slurm)
        if not a.submit:
            print(f"sweep.py: wrote {script} ({len(specs)} array tasks): submit it (sbatch {script}), then run this "
                  "command again with --collect once the array has ended")
            return None
        job = submit_batch(slurm_dir, "sweep", script, a.sbatch)
        if a.no_wait:
            print(f"sweep.py: once job {job} has ended (squeue -j {job} lists nothing), run this command again with "
                  "--collect instead of --submit --no-wait")
            return None
        wait_array(specs, job)
    rows = slurm_rows(specs, slurm_dir, "sweep", job)
    for r, (_, _, part) in zip(rows, runs):
        r["partitioner_asked"] = part or ""
    return rows


def parse_args(argv):
    """sweep.py's command line, checked (exit 2 naming the option)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--policies", nargs="+", default=["NOW", "RW"], help="any run.policy of `demsim keys`")
    ap.add_argument("--partitioners", nargs="+", help="any run.partitioner of `demsim keys` (default: the scenario's)")
    ap.add_argument("--out", default="out/sweep")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("--slurm", metavar="FILE", help="write the Slurm job-array script to FILE (its runs in "
                    "OUT/slurm/sweep.json) instead of running; submit it with sbatch, then --collect")
    slurm_args(ap)
    ap.add_argument("--no-wait", action="store_true", help="with --submit: stop once the array is submitted")
    ap.add_argument("--collect", action="store_true",
                    help="the CSV and figure of an array submitted into OUT that has ended (the same command)")
    a = ap.parse_args(argv)
    slurm_check(ap, a)
    if a.no_wait and not a.submit:
        ap.error("--no-wait: only with --submit")
    if a.collect and (a.submit or a.slurm):
        ap.error("--collect: not with --submit or --slurm (collect once the submitted array has ended)")
    if a.jobs < 1:
        ap.error("-j/--jobs: expected at least 1")
    check_choices(ap, a.demsim, "run.policy", "--policies", a.policies)
    check_choices(ap, a.demsim, "run.partitioner", "--partitioners", a.partitioners)
    return a


def main():
    argv, extra = split_extra(sys.argv[1:])
    if argv[:1] == ["--task"]:  # a task of the job array (write_batch)
        if len(argv) != 3 or not argv[2].isdigit():
            print("sweep.py: --task: expected BATCH.json and a task index", file=sys.stderr)
            return 2
        return run_task(argv[1], argv[2])
    a = parse_args(argv)
    for s in a.scenarios:
        if not os.path.isfile(s):
            print(f"sweep.py: {s}: no such scenario file", file=sys.stderr)
            return 2
    runs = [(s, p, part) for s in a.scenarios for part in (a.partitioners or [None]) for p in a.policies]
    os.makedirs(a.out, exist_ok=True)
    rows = sweep_rows(a, runs, extra)
    if rows is None:
        return 0
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
