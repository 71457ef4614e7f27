#!/usr/bin/python3
"""Reproduces the study's figures with the simulator and writes a report beside the study's observations.

    validation/study/run_validation.py [--scale tiny|laptop|study] [--out DIR] [-j N] [--seeds N]
                                       [--hardware] [--resume] [--publish] [--submit [--sbatch OPTIONS]]

Runs the six cases (scenarios/case*.cfg) under SMPI with the policies NOW and RW (and RW5 for
cases 4, 5 and 6), then draws the figures (DIR/figures/*.png, matplotlib) and writes DIR/REPORT.md,
which sets each observation of shared/STUDY.md beside the simulator's figure.

  --scale      tiny (the CTest end-to-end check, about a minute), laptop (20,000 particles, about
               20 minutes on 2 cores) or study (the committed report: the study's 500,000 particles,
               ten repartition intervals of 50 steps, and cases 1 and 3 NOW/RW also at the full
               10,000 steps to show what the shortening changes; about two hours on 2 cores);
               see SCALES below: same box, fill, lattice, material, time step and containers as the
               study, the same number of repartitions per run as far as the scale allows.
  --seeds N    every case run (not the full-length ones, the tornado or the second estimate) with noise
               seeds 1..N (default 1): seed 1 is the run without --seeds (DIR/runs/<run>/), seeds 2..N
               run with --set noise.seed=k into DIR/runs/seed<k>/ (with -j, --resume and --submit, in
               the same job array); the report gives each gain of its observation tables as the seed-1
               figure, then in brackets its mean (min to max) over the seeds. --seeds 1 writes the report
               as before. Cost: N - 1 more times the case runs: at --scale study 33 runs a seed, about
               44 s each two at a time (the committed report's runs) or 67 s (the oscillation study's,
               one at a time on the shared machine), so --seeds 5 adds 50 to 75 minutes to the two hours
               (at --scale tiny, 1.3 s a run: --seeds 2 took 64 s for the 48 case runs, twice seed 1's).
  --hardware   also runs validation/study/hardware.py (native build on this machine, with and without a
               real stress-ng, against the SMPI prediction on a platform calibrated by a bandwidth
               probe) into DIR/hardware and adds its results to the report.
  --resume     keep the runs whose summary.json already exists in DIR/runs (DIR/runs/seed<k>: and its
               noise.seed is k) with the scale's particles and steps (a run writes it last, so an
               interrupted run is run again): resumes an interrupted invocation, or redraws figures and
               report (--reuse: the same).
  --publish    copy DIR/REPORT.md and DIR/figures/ to validation/ (the committed report).
  --submit     run on Slurm instead of here: the case runs, then the tornado's, then the second
               estimate's (one at a time) as job arrays, one run a task (sweep.py's Slurm path:
               DIR/slurm/ holds the arrays and their tasks' output; --sbatch adds sbatch options);
               each array is waited for and its runs read back into DIR/runs as a local run
               leaves them, so the figures and report are the same. -j does not apply; the
               hardware check (--hardware) measures this machine and stays here. The nodes need
               the same paths (a shared file system); --resume submits only the missing runs.

Stress schedules (case 6) are in simulated seconds: the on/off periods of scenarios/case6-ratio*.cfg
are multiplied by the ratio of the scaled run's work to the study's (particles x steps), so that the
stress periods keep their length relative to the run; the scaled scenario files are written to
DIR/scenarios. Nothing else is changed per case: every case runs on platforms/openstack.xml as
committed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import concurrent.futures

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
VALIDATION = os.path.join(TOP, "validation")  # the committed report and figures
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "platforms"))  # make_platforms: the calibration constants

import sweep  # noqa: E402  (validation/study/sweep.py: one run, its summary)

STUDY_PARTICLES = 500000
STUDY_STEPS = 10000
STUDY_REPARTITION_EVERY = 1000

# The scales. Both keep the study's problem shape (box 1 m, lower half filled, simple cubic lattice
# in contact, dt 1e-8 s) and platform; they change the particle count and the step count.
SCALES = {
    "tiny": dict(particles=2000, steps=80, repartition_every=20, metrics_every=5,
                 case45_stressed=[1, 4], case6_ratios=[0, 100],
                 purpose="end-to-end check of the pipeline (CTest); the figures are not meant to be read"),
    "laptop": dict(particles=20000, steps=1600, repartition_every=200, metrics_every=40,
                   case45_stressed=[1, 2, 3, 4, 5], case6_ratios=[0, 20, 50, 80, 100],
                   purpose="8 repartition intervals per run (the study: 10), 20,000 particles"),
    "study": dict(particles=500000, steps=500, repartition_every=50, metrics_every=10,
                  case45_stressed=[1, 3, 5], case6_ratios=[0, 50, 100], full_cases=["case1", "case3"],
                  hardware=dict(particles=500000, steps=100, repeats=3), tornado_steps=250,
                  purpose="the committed report: the study's 500,000 particles and time step, ten repartition "
                          "intervals per run (500 steps, one every 50; the study: 10,000 and 1,000), and cases 1 "
                          "and 3 NOW/RW also at the full 10,000 steps"),
}
FULL = "-full"  # the full-length runs of cases 1 and 3 (--scale study): caseN-full


def scale_factor(sc):
    """Work of the scaled run over the study's (particles x steps)."""
    return sc["particles"] * sc["steps"] / float(STUDY_PARTICLES * STUDY_STEPS)


def scaled_case6(ratio, sc, outdir):
    """Writes case6-ratio<ratio>.cfg with its stress schedule scaled to the run; returns its path
    and the (on, off) periods in simulated seconds (None when the stress is constant or absent)."""
    src = os.path.join(TOP, "scenarios", f"case6-ratio{ratio}.cfg")
    with open(src) as f:
        text = f.read()
    k = scale_factor(sc)
    sched = None
    m = re.search(r"on = ([0-9.eE+-]+); off = ([0-9.eE+-]+);", text)
    if m:
        on, off = float(m.group(1)) * k, float(m.group(2)) * k
        sched = (on, off)
        text = text.replace(m.group(0), f"on = {on:.6g}; off = {off:.6g};")
    text = text.replace('file = "../platforms/openstack.xml";',
                        f'file = "{os.path.join(TOP, "platforms", "openstack.xml")}";')
    text = text.replace("# Generated by scenarios/make_scenarios.py.",
                        f"# Generated by scenarios/make_scenarios.py; stress periods scaled by {k:.6g} "
                        f"(particles x steps of the run / the study's) by validation/study/run_validation.py.")
    os.makedirs(outdir, exist_ok=True)
    dst = os.path.join(outdir, f"case6-ratio{ratio}.cfg")
    with open(dst, "w") as f:
        f.write(text)
    return dst, sched


def full_case(scen_dir, case):
    """Writes caseN-full.cfg: the case as committed (500,000 particles, 10,000 steps, a repartition
    every 1,000), under its own name; returns its path."""
    with open(os.path.join(TOP, "scenarios", case + ".cfg")) as f:
        text = f.read()
    text = text.replace(f'name = "{case}";', f'name = "{case}{FULL}";').replace(
        'file = "../platforms/openstack.xml";', f'file = "{os.path.join(TOP, "platforms", "openstack.xml")}";')
    os.makedirs(scen_dir, exist_ok=True)
    dst = os.path.join(scen_dir, case + FULL + ".cfg")
    with open(dst, "w") as f:
        f.write(text)
    return dst


def plan(sc, scen_dir):
    """The runs: (scenario file, policy); the full-length pairs (--scale study) first, being the
    longest."""
    runs = []
    for case in sc.get("full_cases", []):
        path = full_case(scen_dir, case)
        runs += [(path, "NOW"), (path, "RW")]
    for c in ("case1", "case2", "case3"):
        for p in ("NOW", "RW"):
            runs.append((os.path.join(TOP, "scenarios", c + ".cfg"), p))
    for case in ("case4", "case5"):
        for k in sc["case45_stressed"]:
            for p in ("NOW", "RW", "RW5"):
                runs.append((os.path.join(TOP, "scenarios", f"{case}-stress{k}.cfg"), p))
    schedules = {}
    for r in sc["case6_ratios"]:
        path, sched = scaled_case6(r, sc, scen_dir)
        schedules[r] = sched
        for p in ("NOW", "RW", "RW5"):
            runs.append((path, p))
    return runs, schedules


def run_name(scenario, policy):
    return f"{os.path.splitext(os.path.basename(scenario))[0]}-{policy}"


def seeded(runs, seeds):
    """The runs with their noise seed, [(scenario, policy, seed)]: every run with seed 1 (the scenario's
    own noise.seed), and every run but the full-length ones again with seeds 2..seeds (--seeds)."""
    return [(s, p, 1) for s, p in runs] + [(s, p, k) for k in range(2, seeds + 1) for s, p in runs
                                           if not os.path.basename(s).endswith(FULL + ".cfg")]


def seed_dir(runs_dir, seed):
    """Where the runs of a noise seed go: DIR/runs/ for seed 1 (as without --seeds), DIR/runs/seed<k>/."""
    return runs_dir if seed == 1 else os.path.join(runs_dir, f"seed{seed}")


def seed_options(seed):
    """demsim options of a seed's run: none for seed 1 (the scenario's own), else noise.seed."""
    return [] if seed == 1 else ["--set", f"noise.seed={seed}"]


def seed_label(seed):
    return "" if seed == 1 else f" seed {seed}"


def reusable(a, runs_dir, scenario, policy, particles, steps, seed=1):
    """With --resume: the run's summary exists and is of this particle count and length (and, for a
    seed other than 1, of this noise seed)."""
    path = os.path.join(seed_dir(runs_dir, seed), run_name(scenario, policy), "summary.json")
    if not (a.reuse and os.path.exists(path)):
        return False
    with open(path) as f:
        js = json.load(f)
    return (js.get("steps") == steps and js.get("particles_start", js.get("particles")) == particles
            and (seed == 1 or (js.get("noise") or {}).get("seed") == seed))


def run_options(scenario, sc):
    """demsim options of one run: the scale's, except for the full-length ones (their file's own)."""
    if os.path.basename(scenario).endswith(FULL + ".cfg"):
        return ["--set", "output.metrics_every=100"], STUDY_PARTICLES, STUDY_STEPS
    return (["--particles", str(sc["particles"]), "--steps", str(sc["steps"]),
             "--repartition-every", str(sc["repartition_every"]),
             "--set", f"output.metrics_every={sc['metrics_every']}"], sc["particles"], sc["steps"])


def main():
    a = parse_args()
    sc = dict(SCALES[a.scale], name=a.scale)
    if a.full is not None:
        sc["full_cases"] = [c for c in a.full.split(",") if c]
        bad = [c for c in sc["full_cases"] if not os.path.isfile(os.path.join(TOP, "scenarios", c + ".cfg"))]
        if bad:
            print(f"run_validation.py: --full: no scenarios/{bad[0]}.cfg", file=sys.stderr)
            return 2
    out = os.path.abspath(a.out or os.path.join(TOP, "out", f"validation-{a.scale}"))
    if not os.access(a.demsim, os.X_OK):
        print(f"run_validation.py: {a.demsim}: not built (cmake --preset smpi; cmake --build --preset smpi)",
              file=sys.stderr)
        return 2
    t0 = time.time()
    runs_dir = os.path.join(out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    runs, schedules = plan(sc, os.path.join(out, "scenarios"))
    every = seeded(runs, a.seeds)
    print(f"run_validation.py: scale {a.scale}: {sc['particles']} particles x {sc['steps']} steps, repartition "
          f"every {sc['repartition_every']} steps, {len(every)} runs"
          f"{f' (noise seeds 1 to {a.seeds})' if a.seeds > 1 else ''} on {a.jobs} jobs; outputs in {out}", flush=True)

    hw = hardware_check(a, sc, out)

    todo, failed, runs_wall, timing = run_all(a, sc, every, runs_dir, out)

    sens = None
    if not a.no_sensitivity:
        sens = tornado(sc, out, a, hw)
        failed += sens["failed"]

    meas = None
    if not a.no_measured:
        meas = measured(sc, out, a, hw)
        if meas:
            failed += meas["failed"]

    import figures
    import report
    data = figures.load_runs(runs_dir, [run_name(s, p) for s, p in runs])
    by_seed = [data] + [figures.load_runs(seed_dir(runs_dir, k), [run_name(s, p) for s, p, j in every if j == k])
                        for k in range(2, a.seeds + 1)]
    if sens:
        sens["data"] = figures.load_runs(sens["runs_dir"], sens["names"])
    if meas:
        meas["data"] = figures.load_runs(meas["runs_dir"], meas["names"])
    figs = figures.draw_all(data, sc, schedules, os.path.join(out, "figures"), hw, sens, by_seed)
    total_wall = time.time() - t0
    meta = dict(scale=sc, command=" ".join(["validation/study/run_validation.py"] + sys.argv[1:]), timing=timing,
                runs=len(every), runs_executed=len(todo), seeds=a.seeds, jobs=a.jobs, runs_wall_s=runs_wall,
                hardware_run=a.hardware, total_wall_s=total_wall, failed=failed, schedules=schedules,
                scale_factor=scale_factor(sc),
                study=dict(particles=STUDY_PARTICLES, steps=STUDY_STEPS, repartition_every=STUDY_REPARTITION_EVERY),
                commit=a.commit or git_commit(), demsim=a.demsim)
    path = report.write(out, data, figs, meta, hw, sens, meas, by_seed)
    print(f"run_validation.py: {len(figs)} figures in {os.path.join(out, 'figures')}, report {path}; "
          f"{total_wall:.0f} s wall ({runs_wall:.0f} s of runs)", flush=True)
    if a.publish:
        publish(out, path)
    return 1 if failed else 0


def parse_args():
    """run_validation.py's command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="laptop")
    ap.add_argument("--out", default=None, help="output directory (default: out/validation-SCALE)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"),
                    help="the SMPI build's launcher")
    ap.add_argument("--native", default=os.path.join(TOP, "build", "native", "demsim"),
                    help="the native build (for --hardware)")
    ap.add_argument("--hardware", action="store_true", help="also run validation/study/hardware.py")
    ap.add_argument("--commit", default=None,
                    help="the commit the builds were made from, for the report (default: this tree's HEAD)")
    ap.add_argument("--resume", "--reuse", dest="reuse", action="store_true",
                    help="keep runs that already have a summary.json for this scale (resume, or redraw)")
    ap.add_argument("--full", default=None, metavar="CASES",
                    help="the cases also run at full length (10,000 steps), comma-separated, '' for none (default: "
                         "the scale's; study: case1,case3, about an hour of the invocation)")
    ap.add_argument("--no-sensitivity", action="store_true",
                    help="skip the tornado (each calibration constant -20 %% and +20 %%, cases 1, 2, 3, 5; 56 runs)")
    ap.add_argument("--no-measured", action="store_true",
                    help="skip the second estimate (device.cost = measured, cases 1, 2, 3, 5 under NOW and RW, run one "
                         "at a time)")
    ap.add_argument("--local-speed", type=float, default=None,
                    help="flop/s of one core of this machine for the DEM kernels (device.local_speed); default: the "
                         "hardware check's measurement (out/hardware/hardware.json)")
    ap.add_argument("--publish", action="store_true", help="copy REPORT.md and figures/ to validation/")
    ap.add_argument("--seeds", type=int, default=1, metavar="N",
                    help="run every case run (not the full-length ones) with noise seeds 1..N, seeds 2..N into "
                         "DIR/runs/seed<k>/; the report gives each gain's mean (min to max) over them (default 1)")
    sweep.slurm_args(ap)
    a = ap.parse_args()
    sweep.slurm_check(ap, a)
    if a.jobs < 1:
        ap.error("-j/--jobs: expected at least 1")
    if a.seeds < 1:
        ap.error("--seeds: expected at least 1")
    return a


def hardware_check(a, sc, out):
    """With --hardware, validation/study/hardware.py into OUT/hardware/ (first, while the machine is not
    busy with the runs); the hardware.json there (this one's or an earlier one's), or None."""
    hw = None
    if a.hardware:  # first, while the machine is not busy with the runs below
        hw_dir = os.path.join(out, "hardware")
        cmd = [sys.executable, os.path.join(HERE, "hardware.py"), "--out", hw_dir, "--demsim", a.demsim,
               "--native", a.native]
        if a.scale == "tiny":
            cmd.append("--quick")
        for k, v in sorted(sc.get("hardware", {}).items()):
            cmd += [f"--{k}", str(v)]
        print("run_validation.py: " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=False)
    hw_json = os.path.join(out, "hardware", "hardware.json")
    if os.path.exists(hw_json):
        with open(hw_json) as f:
            hw = json.load(f)
    return hw


def execute(a, out, array, specs, labels, jobs):
    """The runs (sweep.run_spec's) on Slurm as one job array (--submit; `jobs` at a time there too when
    1) or here, `jobs` at a time with a line each; the labels of those that failed."""
    if a.submit:
        rows = sweep.slurm_runs(a, array, specs, slurm_dir(out), throttle=1 if jobs == 1 else None)
    else:
        rows = [None] * len(specs)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            futs = {ex.submit(sweep.run_one, **spec): i for i, spec in enumerate(specs)}
            for n, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                i = futs[fut]
                rows[i] = r = fut.result()
                print(f"  [{n}/{len(specs)}] {labels[i]}: " + (f"simulated {r['sim_time_s']:.4g} s" if r["status"] == 0
                      else "FAILED, see its demsim.log") + f" ({r['wall_s']:.1f} s wall)", flush=True)
    return [labels[i] for i, r in enumerate(rows) if r["status"] != 0]


def run_all(a, sc, runs, runs_dir, out):
    """The runs [(scenario, policy, seed)] not already there (reusable), a.jobs at a time, one line each;
    OUT/timing.json. Returns (the runs executed, the failed ones' names, their wall time, the timing record)."""
    todo = [(s, p, k) for s, p, k in runs if not reusable(a, runs_dir, s, p, *run_options(s, sc)[1:], seed=k)]
    args = [(a.demsim, s, p, seed_dir(runs_dir, k), run_options(s, sc)[0] + seed_options(k)) for s, p, k in todo]
    t_runs = time.time()
    labels = [run_name(sp, p) + seed_label(k) for sp, p, k in todo]
    failed = execute(a, out, "runs", [sweep.run_spec(*x) for x in args], labels, a.jobs)  # seeds in the same array
    runs_wall = time.time() - t_runs
    timing_path = os.path.join(out, "timing.json")
    timing = dict(runs_wall_s=runs_wall, runs_executed=len(todo), jobs=a.jobs, command=" ".join(
        ["validation/study/run_validation.py"] + sys.argv[1:]), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    if todo or not os.path.exists(timing_path):
        with open(timing_path, "w") as f:
            json.dump(timing, f)
    else:  # every run reused: report the invocation that ran them
        with open(timing_path) as f:
            timing = json.load(f)
    if failed:
        print("run_validation.py: failed runs: " + ", ".join(failed), file=sys.stderr)
    return todo, failed, runs_wall, timing


def slurm_dir(out):
    """Where --submit writes its job arrays (runs, tornado, measured) and Slurm their tasks' output."""
    return os.path.join(out, "slurm")


def publish(out, path):
    """--publish: the report and its figures copied to validation/ (the committed report)."""
    dst = os.path.join(VALIDATION, "figures")
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    shutil.copytree(os.path.join(out, "figures"), dst)
    shutil.copy(path, os.path.join(VALIDATION, "REPORT.md"))
    print(f"run_validation.py: published to {VALIDATION}/REPORT.md and {dst}/")


# The tornado: every calibration constant of platforms/make_platforms.py moved by -20 % and +20 %
# (the others held), cases 1, 2, 3 and 5 (one stressed neighbour) under NOW and RW.
TORNADO_CASES = ["case1", "case2", "case3", "case5-stress1"]
TORNADO_CONSTANTS = [
    ("KERNEL_FLOPS_PER_CYCLE", "core rate: every CPU host's speed, and the GPU's FP64 rate derived from it"),
    ("CORE_BW_FRACTION", "per-core bandwidth (core_bw of every container)"),
    ("NET_HOP_LATENCY", "network latency of every link (NIC and container veth)"),
]
TORNADO_STEP = 0.2
# Beside the constants, a hardware fact whose measurement here disagrees with its datasheet value:
# the study's cores' simd_lanes (their datapath's 4 lanes) set to this machine's measured ratio of
# scalar to lane code (validation/study/hardware.py: the C reference's pair pass over the kernel's; the
# i7s are not at hand to measure theirs). Run only where the hardware check has measured it.
WHATIF_LANES = ("SIMD_LANES", "the study's cores' simd_lanes (their datapath: 4) at this machine's measured ratio of "
                "scalar to lane code (the C reference's pair pass over the kernel's, validation/study/hardware.py)")


def platform_variant(xml, const, k):
    """openstack.xml with one calibration constant scaled by k, as make_platforms.py would write it."""
    if const == "KERNEL_FLOPS_PER_CYCLE":
        xml = re.sub(r'(<host id="(?![^"]*-membus")[^"]+" speed=")([0-9.eE+-]+)f"',
                     lambda m: f'{m.group(1)}{float(m.group(2)) * k:.6g}f"', xml)
        return re.sub(r'(<prop id="gpu_flops" value=")([0-9.eE+-]+)"',
                      lambda m: f'{m.group(1)}{float(m.group(2)) * k:.6g}"', xml)
    if const == "CORE_BW_FRACTION":
        return re.sub(r'(<prop id="core_bw" value=")([0-9.eE+-]+)"',
                      lambda m: f'{m.group(1)}{float(m.group(2)) * k:.6g}"', xml)
    if const == "NET_HOP_LATENCY":
        return re.sub(r'(<link [^>]*latency=")([0-9.eE+-]+)us"',
                      lambda m: f'{m.group(1)}{float(m.group(2)) * k:.6g}us"', xml)
    if const == "SIMD_LANES":  # at least one lane, as sim/host.c requires
        return re.sub(r'(<prop id="simd_lanes" value=")([0-9.eE+-]+)"',
                      lambda m: f'{m.group(1)}{max(1.0, float(m.group(2)) * k):.6g}"', xml)
    raise ValueError(const)


def whatif_lanes_factor(hw):
    """k for WHATIF_LANES: the hardware check's measured scalar-over-lanes ratio over the study's
    cores' simd_lanes (openstack.xml, the CN-6700's); None without the measurement."""
    ratio = ((hw or {}).get("probe") or {}).get("scalar_over_lanes")
    if not ratio:
        return None
    with open(os.path.join(TOP, "platforms", "openstack.xml")) as fh:
        m = re.search(r'<host id="n1-cn6700-4"[^>]*>(?:(?!</host>).)*?<prop id="simd_lanes" value="([0-9.eE+-]+)"',
                      fh.read(), re.S)
    return ratio / float(m.group(1)) if m else None


def tornado_plan(out, lanes_k=None):
    """Writes the variant platforms and scenarios (with lanes_k, WHATIF_LANES's too); returns
    [(const, k, case, cfg)]."""
    d = os.path.join(out, "tornado")
    os.makedirs(os.path.join(d, "scenarios"), exist_ok=True)
    with open(os.path.join(TOP, "platforms", "openstack.xml")) as fh:
        base = fh.read()
    plan_ = []
    variants = [("BASELINE", 1.0)] + [(c, k) for c, _ in TORNADO_CONSTANTS for k in (1.0 - TORNADO_STEP, 1.0 + TORNADO_STEP)]
    variants += [(WHATIF_LANES[0], lanes_k)] if lanes_k else []
    for const, k in variants:
        tag = ("baseline" if const == "BASELINE" else f"{const.lower()}-{k:.3f}" if const == WHATIF_LANES[0] else
               f"{const.lower()}-{'lo' if k < 1 else 'hi'}")
        plat = os.path.join(d, f"openstack-{tag}.xml")
        with open(plat, "w") as fh:
            fh.write((base if const == "BASELINE" else platform_variant(base, const, k)).replace(
                "<platform version", f"<!-- validation/study/run_validation.py: openstack.xml with {const} x {k:g} -->\n"
                "<platform version", 1))
        for case in TORNADO_CASES:
            with open(os.path.join(TOP, "scenarios", case + ".cfg")) as fh:
                text = fh.read()
            text = text.replace('file = "../platforms/openstack.xml";', f'file = "{plat}";').replace(
                f'name = "{case}";', f'name = "{case}-{tag}";')
            cfg = os.path.join(d, "scenarios", f"{case}-{tag}.cfg")
            with open(cfg, "w") as fh:
                fh.write(text)
            plan_.append((const, k, case, cfg))
    return plan_


def tornado_options(cfg, sc):
    """The validation runs' options, with at most sc['tornado_steps'] steps (study: 250, five
    repartition intervals: 56 runs of half the length keep the tornado within about half an hour)."""
    steps = min(sc["steps"], sc.get("tornado_steps", sc["steps"]))
    return ["--particles", str(sc["particles"]), "--steps", str(steps), "--repartition-every",
            str(sc["repartition_every"]), "--set", f"output.metrics_every={sc['metrics_every']}"], steps


def tornado(sc, out, a, hw=None):
    """Runs the tornado's variants and its own baseline (NOW and RW each), and the simd_lanes
    what-if where the hardware check measured the ratio."""
    rd = os.path.join(out, "tornado", "runs")
    lanes_k = whatif_lanes_factor(hw)
    variants = tornado_plan(out, lanes_k)
    jobs = [(cfg, p) for _, _, _, cfg in variants for p in ("NOW", "RW")]
    steps = tornado_options("", sc)[1]

    todo = [(c, p) for c, p in jobs if not reusable(a, rd, c, p, sc["particles"], steps)]
    print(f"run_validation.py: tornado, {len(TORNADO_CONSTANTS)} constants x +-{TORNADO_STEP:.0%}"
          f"{' and the simd_lanes what-if' if lanes_k else ''}: {len(todo)} runs", flush=True)
    failed = execute(a, out, "tornado", [sweep.run_spec(a.demsim, c, p, rd, tornado_options(c, sc)[0]) for c, p in todo],
                     [f"tornado/{run_name(c, p)}" for c, p in todo], a.jobs)
    names = [run_name(c, p) for c, p in jobs]
    return dict(variants=[(const, k, case, run_name(cfg, "NOW"), run_name(cfg, "RW")) for const, k, case, cfg in variants],
                constants=TORNADO_CONSTANTS, step=TORNADO_STEP, names=names, runs_dir=rd, failed=failed,
                whatif=dict(const=WHATIF_LANES[0], what=WHATIF_LANES[1], k=lanes_k,
                            ratio=hw["probe"]["scalar_over_lanes"]) if lanes_k else None,
                steps=tornado_options("", sc)[1], particles=sc["particles"], repartition_every=sc["repartition_every"])


# The second estimate (device.cost = "measured"): every kernel charged its time on this machine's
# OpenCL device, scaled by the container's speed over this machine's (sim/clock.c). The runs go one
# at a time: a measurement beside another run would measure the other run too.
MEASURED_CASES = TORNADO_CASES


def measured(sc, out, a, hw):
    """Runs MEASURED_CASES x NOW/RW with device.cost = measured; None when no local speed is known."""
    # the platforms' unit: clock x KERNEL_FLOPS_PER_CYCLE (the constant, not this machine's own
    # measurement of it: the ratio to a container's speed is then the ratio of the clocks and cores)
    import make_platforms
    clock = ((hw or {}).get("probe") or {}).get("clock_hz")
    speed = a.local_speed or (clock * make_platforms.KERNEL_FLOPS_PER_CYCLE if clock else None)
    source = ("--local-speed" if a.local_speed else "none" if not clock else
              f"this machine's clock measured by the hardware check ({clock / 1e9:.3g} GHz) x "
              f"KERNEL_FLOPS_PER_CYCLE ({make_platforms.KERNEL_FLOPS_PER_CYCLE:g}), the platforms' unit")
    if not speed:
        print("run_validation.py: second estimate skipped: no local speed (--local-speed, or --hardware to measure it)",
              flush=True)
        return None
    rd = os.path.join(out, "measured", "runs")
    jobs = [(os.path.join(TOP, "scenarios", c + ".cfg"), p) for c in MEASURED_CASES for p in ("NOW", "RW")]
    opts = lambda s: run_options(s, sc)[0] + ["--set", "device.cost=measured", "--set", f"device.local_speed={speed:.6g}"]

    todo = [(s, p) for s, p in jobs if not reusable(a, rd, s, p, sc["particles"], sc["steps"])]
    print(f"run_validation.py: second estimate (kernels measured here, {speed / 1e9:.3g} Gflop/s per core): "
          f"{len(todo)} runs, one at a time", flush=True)
    failed = execute(a, out, "measured", [sweep.run_spec(a.demsim, sp, p, rd, opts(sp)) for sp, p in todo],
                     [f"measured/{run_name(sp, p)}" for sp, p in todo], 1)  # one at a time, on Slurm too
    # the speed the runs were made with (a reused run keeps the one of its own invocation)
    log = os.path.join(rd, run_name(*jobs[0]), "demsim.log")
    if os.path.exists(log):
        with open(log, errors="replace") as fh:
            used = re.search(r"device\.local_speed=([0-9.eE+-]+)", fh.read())
        if used and abs(float(used.group(1)) - speed) > 1e-6 * speed:
            speed, source = float(used.group(1)), (
                "the value the reused runs were made with (their demsim.log): this machine's clock measured by the "
                f"hardware check of their time x KERNEL_FLOPS_PER_CYCLE ({make_platforms.KERNEL_FLOPS_PER_CYCLE:g})")
    return dict(names=[run_name(s, p) for s, p in jobs], runs_dir=rd, failed=failed, local_speed=speed,
                cases=MEASURED_CASES, speed_source=source)


def git_commit():
    try:
        return subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
