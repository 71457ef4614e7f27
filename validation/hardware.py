#!/usr/bin/python3
"""Validation on this machine: the native build against the SMPI prediction for this machine's platform.

    validation/hardware.py [--out DIR] [--quick] [--repeats R] [--demsim SMPI_LAUNCHER] [--native NATIVE_DEMSIM]

1. Probe: builds validation/bwprobe.c and measures the triad bandwidth on one core and on all
   cores, and one core's FP64 rate; writes DIR/local-calibrated.xml, platforms/local.xml with
   these figures in place of its estimates (through platforms/make_platforms.py's own functions),
   plus one host, local-1half, for the emulation below.
2. Co-located memory stress (the study's case 5 on one machine): one DEM rank pinned to core 0
   (taskset, one PoCL thread: POCL_MAX_PTHREAD_COUNT=1), without and with a real
   `stress-ng --vm 1 --vm-bytes 1G --vm-keep` pinned to core 1. The SMPI prediction runs the same
   scenario on host local-0 with a vm stress actor on local-1 of the calibrated platform.
   Reported: the total time (loop time) both ways and the stressed rank's slowdown (its
   computational load with stress over without), measured against predicted.
3. Emulated heterogeneity (case-1-like), on by default: two ranks, rank 0 alone on core 0, rank 1
   on core 1 running half the time: stopped and continued every 10 ms (SIGSTOP/SIGCONT, as cpulimit
   does; --emulate-with hog: sharing its core with `stress-ng --cpu 1` instead, which the scheduler
   undoes on a machine shared with other users by moving their processes to the other core). NOW and RW. Predicted with rank 1 on local-1half (half the core rate
   and half the per-core bandwidth: the time-share of a core). Reported: total times, the gain of
   RW, the load ratio of the two ranks under NOW.

Each native measurement is repeated (--repeats, default 5) and the median run kept; the spread,
the load average before each run and the CPU share the run's processes obtained are reported (on
a machine shared with other users they decide whether the comparison means anything).
Writes DIR/hardware.json (read by run_validation.py's report) and DIR/HARDWARE.md.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "platforms"))

VM = ["taskset", "-c", "1", "stress-ng", "--quiet", "--vm", "1", "--vm-bytes", "1G", "--vm-keep"]
CPU_LATENCY = 5e-6  # make_platforms.CPU_LAUNCH_LATENCY
MATERIAL = "material = { youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; density = 2500.0; };"


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def build_probe(out):
    exe = os.path.join(out, "bwprobe")
    cc = shutil.which("cc") or shutil.which("gcc")
    p = sh([cc, "-std=gnu11", "-O3", "-march=native", "-ffp-contract=fast", "-pthread",
            os.path.join(HERE, "bwprobe.c"), "-o", exe])
    if p.returncode:
        raise SystemExit(f"hardware.py: cannot build the probe:\n{p.stdout}")
    return exe


def probe(exe, repeats, ncpu, mib):
    best = {"bw_1core": 0.0, "bw_allcore": 0.0, "flops_1core": 0.0, "gather_1core": 0.0,
            "lattice_1core": 0.0, "divider_1core": 0.0, "flops_allcore_per_thread": 0.0, "first_touch": 0.0}
    for r in range(repeats):
        gather = ["--gather", "--first-touch"] if r == 0 else []
        one = json.loads(sh(["taskset", "-c", "0", exe, "--threads", "1", "--mib", str(mib)] + gather).stdout)
        pingpong = ["--pingpong"] if r == 0 and ncpu >= 2 else []
        allc = json.loads(sh([exe, "--threads", str(ncpu), "--mib", str(mib)] + pingpong).stdout)
        if pingpong:  # a cache line between cores 0 and 1: tens of ns under one L3, hundreds across chiplets
            best["pingpong_ns"] = allc["pingpong_round_trip_ns"]
        # bus traffic (write-allocate counted), as sim/cost.c counts the kernels' traffic
        best["bw_1core"] = max(best["bw_1core"], one["triad_bus_Bps"])
        best["bw_allcore"] = max(best["bw_allcore"], allc["triad_bus_Bps"])
        best["flops_1core"] = max(best["flops_1core"], one["flops_per_thread"])
        best["divider_1core"] = max(best["divider_1core"], one["divider_per_thread"])
        # every core busy at once: below the 1-core figure when the cores share a physical one
        best["flops_allcore_per_thread"] = max(best["flops_allcore_per_thread"], allc["flops_per_thread"])
        if gather:
            best["gather_1core"] = one["random_lines_per_s"] * 64.0
            best["lattice_1core"] = one["lattice_Bps"]
            best["first_touch"] = one["first_touch_Bps"]  # new memory mapped at its first write
        best["lanes"] = one["lanes"]
    best["threads_all"] = ncpu
    best["mib"] = mib
    return best


def latency_factor(curve, u):
    """sim_host_latency_factor of sim/host.c: the curve 'u:f,...' interpolated at u."""
    pts = [tuple(map(float, p.split(":"))) for p in curve.split(",")]
    if u <= pts[0][0]:
        return pts[0][1]
    for (u0, f0), (u1, f1) in zip(pts, pts[1:]):
        if u <= u1:
            return f0 + (f1 - f0) * (u - u0) / (u1 - u0)
    return pts[-1][1]


def kernel_flops_per_cycle(pr, plat, exe, reps=10, side=60):
    """CALIBRATION CONSTANT 1 measured here: the contact-force kernel (dem_forces_all, particles in
    contact, side^3 of them) on both cores through validation/calibrate_cost; its time less the
    model's memory term (traffic / bandwidth of the calibrated platform), the launch latency and
    its divisions and square roots at the probe's divider rate is its compute; the other flops
    over it, per core, over the core's clock (FMA peak / flop per cycle)."""
    p = sh([exe, "--platform", plat, "--host", "local", "--sizes", str(side), "--packings", "contact",
            "--reps", str(reps)])
    if p.returncode:
        raise SystemExit(f"hardware.py: calibrate_cost failed:\n{p.stdout}")
    row = next(l for l in p.stdout.splitlines() if l.startswith("contact") and " forces_all " in l)
    cols = row.replace("|", " ").split()
    flops, traffic, best, divsqrt = float(cols[7]), float(cols[8]), float(cols[9]) * 1e-6, float(cols[18])
    cores = 2
    bw = min(cores * min(pr["bw_1core"], pr["bw_allcore"]), pr["bw_allcore"])
    divider_s = divsqrt / (cores * pr["divider_1core"])
    compute = best - traffic / bw - CPU_LATENCY - divider_s
    rate = (flops - divsqrt) / (cores * compute)
    clock = pr["flops_1core"] / (32.0 if pr["flops_1core"] > 60e9 else 16.0)
    return dict(kernel_row=row, kernel_flops=flops, kernel_traffic=traffic, kernel_best_s=best,
                kernel_divsqrt=divsqrt, kernel_divider_s=divider_s,
                kernel_rate=rate, clock_hz=clock, kernel_flops_per_cycle=rate / clock)


def kernel_1core(plat, exe, cpu, reps, side):
    """The contact-force kernel on one core (one PoCL thread, pinned to `cpu` where taskset
    exists): its best time over reps, s; None when calibrate_cost fails (its output in the
    second value)."""
    env = dict(os.environ, POCL_MAX_PTHREAD_COUNT="1")
    taskset = shutil.which("taskset")
    cmd = ([taskset, "-c", str(cpu)] if taskset else []) + [exe, "--platform", plat, "--host", "local-0", "--sizes",
                                                           str(side), "--packings", "contact", "--reps", str(reps)]
    p = sh(cmd, env=env)
    if p.returncode:
        return None, p.stdout
    row = next(l for l in p.stdout.splitlines() if l.startswith("contact") and " forces_all " in l)
    return float(row.replace("|", " ").split()[9]) * 1e-6, p.stdout


def kernel_scaling(pr, plat, exe, reps=5, side=60):
    """The same contact-force kernel on one core (core 0): how much faster both cores run it (2.00
    on 2 cores when they do not slow each other; a VM whose cores share a physical core or are
    taken by other guests gives less). The 2-rank predictions assume the cores independent, so
    this bounds how far those checks can agree."""
    best1, text = kernel_1core(plat, exe, 0, reps, side)
    if best1 is None:
        raise SystemExit(f"hardware.py: calibrate_cost on one core failed:\n{text}")
    return dict(kernel_best_1core_s=best1, kernel_scaling=best1 / pr["kernel_best_s"])


def core_times(plat, exe, reps=5, side=50):
    """The contact-force kernel on CPU 0, then on CPU 1 (s): run right before a 2-rank
    measurement, it says whether the two cores were as fast as each other then (the 2-rank
    predictions assume they are; a neighbour on the host can slow one). None on failure."""
    times = [kernel_1core(plat, exe, cpu, reps, side)[0] for cpu in (0, 1)]
    return None if None in times else times


def calibrated_platform(pr, path):
    """platforms/local.xml rebuilt with the measured figures, plus local-1half."""
    import make_platforms as mp
    bw, core_bw, peak = pr["bw_allcore"], min(pr["bw_1core"], pr["bw_allcore"]), pr["flops_1core"]
    # the probe's FMA loop gives the core's peak; the DEM kernels run at KERNEL_FLOPS_PER_CYCLE
    # per clock cycle (make_platforms.py), the clock being peak / 32 flop per cycle (AVX-512 FMA
    # x 2) on this machine's cores, peak / 16 on an AVX2 core
    flops_per_cycle_peak = 32.0 if peak > 60e9 else 16.0
    flops = peak / flops_per_cycle_peak * mp.KERNEL_FLOPS_PER_CYCLE
    header = [
        "This machine, CALIBRATED by validation/hardware.py (validation/bwprobe.c), from",
        "platforms/make_platforms.py's local platform with its estimates replaced by measurements:",
        f"memory bandwidth {bw / 1e9:.3g} GB/s (triad bus traffic, {pr['threads_all']} threads); per-core bandwidth",
        f"{core_bw / 1e9:.3g} GB/s (triad, 1 thread); missed gathers {pr['gather_1core'] / 1e9:.3g} GB/s per core; core FP64 peak {peak / 1e9:.3g} GF/s (FMA loop), so a",
        f"{peak / flops_per_cycle_peak / 1e9:.3g} GHz clock and {flops / 1e9:.3g} GF/s for the DEM kernels (KERNEL_FLOPS_PER_CYCLE);",
        f"divider {pr['divider_1core'] / 1e9:.3g} G lanes/s per core (divide / square-root loop);",
        f"new memory mapped at its first write at {pr['first_touch'] / 1e9:.3g} GB/s (a page fault per 4 KiB).",
        "launch_latency stays the platform author's estimate. local-1half: one core time-shared with",
        "a CPU hog (half its rate and half its per-core bandwidth), for the emulated heterogeneity.",
    ]
    node = mp.simple_node("local", "local", bw, flops, core_bw,
                          [("local-0", 1, "local-1core"), ("local-1", 1, "local-1core"),
                           ("local", 2, "local-2core")],
                          ["the machine: node 'local', memory bus local-membus"],
                          latency=mp.CPU_LAUNCH_LATENCY, llc=mp.LOCAL_LLC, gather=pr["gather_1core"],
                          divider=pr["divider_1core"], first_touch=pr["first_touch"])
    half = dict(host="local-1half", cores=1,
                props=mp.container_props("local-1half", "local", "local", core_bw / 2, latency=mp.CPU_LAUNCH_LATENCY,
                                         llc=mp.LOCAL_LLC, gather=pr["gather_1core"] / 2,
                                         divider=pr["divider_1core"] / 2, first_touch=pr["first_touch"] / 2))
    node["containers"].append(half)
    xml = mp.platform("local", header, [node])
    # platform() gives every container of a node the node's core rate: halve local-1half's
    xml = xml.replace(f'<host id="local-1half" speed="{flops:.6g}f"', f'<host id="local-1half" speed="{flops / 2:.6g}f"')
    with open(path, "w") as f:
        f.write(xml)
    return path


def scenario(path, name, platform, hosts, particles, steps, every, metrics_every, stress=None, ratio=1.001):
    lines = [f'name = "{name}";',
             f'description = "hardware validation ({name}), written by validation/hardware.py";',
             f"problem = {{ box = 1.0; fill = 0.5; particles = {particles}; diameter_ratio = {ratio}; }};",
             MATERIAL,
             f"time = {{ dt = 1.0e-8; steps = {steps}; }};",
             f'run = {{ ranks = {len(hosts)}; policy = "NOW"; repartition_every = {every}; }};',
             f'platform = {{ file = "{platform}"; hosts = [{", ".join(chr(34) + h + chr(34) for h in hosts)}]; }};']
    if stress:
        lines.append("stress = ( " + stress + " );")
    lines.append(f'output = {{ dir = "out/{name}"; metrics_every = {metrics_every}; }};')
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class Background:
    """A co-located load (stress-ng), pinned, in its own process group; stopped on exit."""

    def __init__(self, args):
        self.args = args
        self.p = None

    def __enter__(self):
        if self.args:
            self.p = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
            time.sleep(2.0)  # let its workers allocate and start
            if self.p.poll() is not None:
                raise SystemExit(f"hardware.py: {' '.join(self.args)} exited at once")
        return self

    def __exit__(self, *exc):
        if self.p and self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()


class Throttle:
    """Duty-cycles a process with SIGSTOP / SIGCONT so that it runs `share` of the wall time (what
    cpulimit does): a slower container whatever else runs on the machine, unlike a CPU hog beside
    it, whose effect the scheduler undoes by moving other users' processes onto the other core.
    The process writes its PID to `pidfile` (sh -c 'echo $$ > F; exec ...')."""

    def __init__(self, pidfile, share=0.5, period=0.02):
        self.pidfile, self.share, self.period = pidfile, share, period
        self.stop = threading.Event()
        self.ran = self.stopped = 0.0

    def _loop(self):
        t_end = time.time() + 60
        while not os.path.exists(self.pidfile) and time.time() < t_end and not self.stop.is_set():
            time.sleep(0.005)
        try:
            with open(self.pidfile) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return
        try:
            while not self.stop.is_set():
                t0 = time.time()
                os.kill(pid, signal.SIGCONT)
                time.sleep(self.period * self.share)
                t1 = time.time()
                os.kill(pid, signal.SIGSTOP)
                time.sleep(self.period * (1 - self.share))
                self.ran += t1 - t0
                self.stopped += time.time() - t1
        except ProcessLookupError:
            return
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def __enter__(self):
        if os.path.exists(self.pidfile):
            os.remove(self.pidfile)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def realised(self):
        return self.ran / (self.ran + self.stopped) if self.ran + self.stopped > 0 else None


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def run_native(cmd, outdir, log, env=None, cores=1):
    """Runs one measurement; records the load average before it and the CPU share its processes got
    (CPU time of the waited-for descendants over wall time x cores): below 1, other processes took
    part of the cores (an MPI rank that busy-waits counts as using its core)."""
    load = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = sh(cmd, env=env)
    wall = time.time() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{p.stdout}\n")
    if p.returncode:
        raise SystemExit(f"hardware.py: failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-2000:]}")
    s = summary(outdir)
    s["_loadavg_before"] = load
    s["_wall"] = wall
    s["_cpu_share"] = cpu / (wall * cores) if wall > 0 else 0.0
    with open(os.path.join(outdir, "measure.json"), "w") as f:
        json.dump({k: s[k] for k in ("_loadavg_before", "_wall", "_cpu_share")}, f)
    return s


def best_of(runs):
    """The median run by total time: on a shared machine the fastest run can be an outlier too (the
    scheduler moves other users' processes between cores), so the median is kept, the spread reported."""
    ordered = sorted(runs, key=lambda s: s["sim_time_s"])
    return ordered[(len(ordered) - 1) // 2]


def spread(label, runs):
    t = sorted(r["sim_time_s"] for r in runs)
    sh_ = [r["_cpu_share"] for r in runs]
    return (f"{label}: {len(t)} runs, {t[0]:.3g} / {t[(len(t) - 1) // 2]:.3g} / {t[-1]:.3g} s (min / median / max), "
            f"CPU share {min(sh_):.2f} to {max(sh_):.2f}")


def load_of(s, rank):
    return next(r["load_s"] for r in s["per_rank"] if r["rank"] == rank)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(TOP, "out", "hardware"))
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "smpi", "demsim"))
    ap.add_argument("--native", default=os.path.join(TOP, "build", "native", "demsim"))
    ap.add_argument("--quick", action="store_true", help="a small problem, one repeat (a smoke test)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--particles", type=int, default=None)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--no-emulate", dest="emulate", action="store_false")
    ap.add_argument("--calibrate-only", action="store_true",
                    help="probe and measure KERNEL_FLOPS_PER_CYCLE (calibrate_cost), print them, stop")
    ap.add_argument("--calibrate-cost", default=os.path.join(TOP, "build", "native", "validation", "calibrate_cost"))
    ap.add_argument("--emulate-with", choices=["throttle", "hog"], default="throttle",
                    help="how rank 1 gets half a core: SIGSTOP/SIGCONT duty cycle (default), or a CPU hog on its core")
    a = ap.parse_args()
    particles = a.particles or (4000 if a.quick else 20000)
    steps = a.steps or (100 if a.quick else 400)
    repeats = a.repeats or (1 if a.quick else 5)
    every = max(steps // 4, 1)
    metrics_every = max(every // 5, 1)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "hardware.log")
    open(log, "w").close()
    ncpu = os.cpu_count() or 1
    if ncpu < 2:
        raise SystemExit("hardware.py: needs at least two cores (one for the DEM rank, one for the co-located load)")
    for exe in (a.demsim, a.native):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"hardware.py: {exe}: not built")
    t_start = time.time()
    cmdline = " ".join(["validation/hardware.py"] + sys.argv[1:])

    print("hardware.py: probe", flush=True)
    exe = build_probe(out)
    pr = probe(exe, repeats, ncpu, 64 if a.quick else 256)
    with Background(VM):
        pr["bw_1core_next_to_vm"] = max(
            json.loads(sh(["taskset", "-c", "0", exe, "--threads", "1", "--mib", str(64 if a.quick else 256)]).stdout)
            ["triad_bus_Bps"] for _ in range(repeats))
    plat = calibrated_platform(pr, os.path.join(out, "local-calibrated.xml"))
    print(f"hardware.py: triad 1 core {pr['bw_1core'] / 1e9:.2f} GB/s, {ncpu} cores {pr['bw_allcore'] / 1e9:.2f} GB/s "
          f"(bus traffic), missed gathers {pr['gather_1core'] / 1e9:.2f} GB/s per core, lattice gathers "
          f"{pr['lattice_1core'] / 1e9:.2f} GB/s, FP64 {pr['flops_1core'] / 1e9:.1f} GF/s per core "
          f"({pr['flops_allcore_per_thread'] / 1e9:.1f} with all cores busy), divider "
          f"{pr['divider_1core'] / 1e9:.2f} G lanes/s, new memory {pr['first_touch'] / 1e9:.2f} GB/s; {plat}", flush=True)
    if os.access(a.calibrate_cost, os.X_OK):
        pr.update(kernel_flops_per_cycle(pr, plat, a.calibrate_cost))
        print(f"hardware.py: contact-force kernel {pr['kernel_rate'] / 1e9:.2f} GF/s per core at "
              f"{pr['clock_hz'] / 1e9:.2f} GHz: KERNEL_FLOPS_PER_CYCLE measured {pr['kernel_flops_per_cycle']:.2f}"
              f" (make_platforms.py: {__import__('make_platforms').KERNEL_FLOPS_PER_CYCLE})", flush=True)
        pr.update(kernel_scaling(pr, plat, a.calibrate_cost))
        print(f"hardware.py: the same kernel on both cores {pr['kernel_scaling']:.2f} x faster than on one", flush=True)
    if a.calibrate_only:
        with open(os.path.join(out, "calibration.json"), "w") as f:
            json.dump(pr, f, indent=1)
        return

    # two regimes: particles in contact (the study's benchmark: contact forces dominate) and apart
    # (no contact: the kernels stream particle data, the memory-bound end)
    regimes = {"contact": 1.001, "apart": 0.99}
    cfg1, cfg1s = {}, {}
    for reg, ratio in regimes.items():
        cfg1[reg] = scenario(os.path.join(out, f"hw-1rank-{reg}.cfg"), f"hw-1rank-{reg}", plat, ["local-0"], particles,
                             steps, every, metrics_every, ratio=ratio)
        cfg1s[reg] = scenario(os.path.join(out, f"hw-1rank-{reg}-vm.cfg"), f"hw-1rank-{reg}-vm", plat, ["local-0"],
                              particles, steps, every, metrics_every,
                              '{ host = "local-1"; kind = "vm"; workers = 1; bytes = 1.0e9; }', ratio=ratio)
    cfg2r = {reg: scenario(os.path.join(out, f"hw-2rank-{reg}.cfg"), f"hw-2rank-{reg}", plat, ["local-0", "local-1"],
                           particles, steps, every, metrics_every, ratio=ratio) for reg, ratio in regimes.items()}
    cfg2 = scenario(os.path.join(out, "hw-2rank.cfg"), "hw-2rank", plat, ["local-0", "local-1half"], particles,
                    steps, every, metrics_every)
    env1 = dict(os.environ, POCL_MAX_PTHREAD_COUNT="1")
    vm = VM
    hog = ["taskset", "-c", "1", "stress-ng", "--quiet", "--cpu", "1", "--cpu-method", "fft"]

    # --- native: memory stress ----------------------------------------------------------------
    base, stressed, nb, ns = {}, {}, {}, {}
    for reg in regimes:
        base[reg], stressed[reg] = [], []
        for i in range(repeats):
            print(f"hardware.py: native, 1 rank, particles {reg}, repeat {i + 1}/{repeats}: without and with "
                  "stress-ng --vm", flush=True)
            d = os.path.join(out, f"native-1rank-{reg}-{i}")
            base[reg].append(run_native(["taskset", "-c", "0", a.native, "run", cfg1[reg], "--out", d, "--quiet"], d,
                                        log, env1))
            d = os.path.join(out, f"native-1rank-{reg}-vm-{i}")
            with Background(vm):
                stressed[reg].append(run_native(["taskset", "-c", "0", a.native, "run", cfg1[reg], "--out", d,
                                                 "--quiet"], d, log, env1))
        nb[reg], ns[reg] = best_of(base[reg]), best_of(stressed[reg])

    # --- native: two ranks, one per core (one PoCL thread each), both on the one memory bus --------
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "POCL_MAX_PTHREAD_COUNT=1"]
    if os.geteuid() == 0:
        mpirun.insert(1, "--allow-run-as-root")
    n2, two = {}, {}
    for reg in regimes:
        two[reg] = []
        for i in range(repeats):
            print(f"hardware.py: native, 2 ranks (one per core), particles {reg}, repeat {i + 1}/{repeats}", flush=True)
            d = os.path.join(out, f"native-2rank-{reg}-{i}")
            app = [a.native, "run", cfg2r[reg], "--policy", "NOW", "--out", d, "--quiet"]
            cores = core_times(plat, a.calibrate_cost) if os.access(a.calibrate_cost, os.X_OK) else None
            two[reg].append(run_native(mpirun + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1", "taskset",
                                                 "-c", "1"] + app, d, log, env1, cores=2))
            two[reg][-1]["_core_times"] = cores
        n2[reg] = best_of(two[reg])

    # --- native: emulated heterogeneity ---------------------------------------------------------
    emu, emu_runs = {}, {}
    if a.emulate:
        mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "POCL_MAX_PTHREAD_COUNT=1"]
        if os.geteuid() == 0:
            mpirun.insert(1, "--allow-run-as-root")
        for pol in ("NOW", "RW"):
            runs = []
            for i in range(repeats):
                print(f"hardware.py: native, 2 ranks (rank 1 on half a core), {pol}, repeat {i + 1}/{repeats}", flush=True)
                d = os.path.join(out, f"native-2rank-{pol}-{i}")
                app = [a.native, "run", cfg2, "--policy", pol, "--out", d, "--quiet"]
                pidfile = os.path.join(out, f"rank1-{pol}-{i}.pid")
                rank1 = ["sh", "-c", f'echo $$ > {pidfile}; exec "$@"', "sh", "taskset", "-c", "1"] + app
                if a.emulate_with == "hog":
                    with Background(hog):
                        r = run_native(mpirun + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1"] + rank1,
                                       d, log, env1, cores=2)
                else:
                    with Throttle(pidfile, 0.5) as th:
                        r = run_native(mpirun + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1"] + rank1,
                                       d, log, env1, cores=2)
                    r["_throttle_share"] = th.realised()
                runs.append(r)
            emu[pol] = best_of(runs)
            emu_runs[pol] = runs

    # --- SMPI predictions on the calibrated platform ---------------------------------------------
    print("hardware.py: SMPI predictions", flush=True)
    pred = {}
    jobs = [(f"1rank-{reg}", cfg1[reg], []) for reg in regimes] + [(f"1rank-{reg}-vm", cfg1s[reg], []) for reg in regimes]
    jobs += [(f"2rank-{reg}", cfg2r[reg], ["--policy", "NOW"]) for reg in regimes]
    if a.emulate:
        jobs += [("2rank-NOW", cfg2, ["--policy", "NOW"]), ("2rank-RW", cfg2, ["--policy", "RW"])]
    # the second estimate (device.cost = measured): the kernels timed here and scaled by speed; this
    # machine's speed in the platforms' unit is the calibrated platform's own (clock x the constant)
    import make_platforms as mp
    local_speed = pr["clock_hz"] * mp.KERNEL_FLOPS_PER_CYCLE
    measured_opts = ["--set", "device.cost=measured", "--set", f"device.local_speed={local_speed:.6g}"]
    jobs += [(f"1rank-{reg}-measured", cfg1[reg], measured_opts) for reg in regimes]
    jobs += [(f"2rank-{reg}-measured", cfg2r[reg], ["--policy", "NOW"] + measured_opts) for reg in regimes]
    for name, cfg, extra in jobs:
        d = os.path.join(out, f"smpi-{name}")
        pred[name] = run_native([a.demsim, "run", cfg, "--out", d, "--quiet"] + extra, d, log)

    # --- comparisons ------------------------------------------------------------------------------
    C = []

    def add(what, unit, m, p, kind="relative"):
        C.append(dict(what=what, unit=unit, measured=m, predicted=p, error_kind=kind))

    node, core = pr["bw_allcore"], min(pr["bw_1core"], pr["bw_allcore"])
    # the triad's core beside the stress worker (sim/membus.c): its bound is one core's bandwidth
    # over the loaded-latency factor of the worker's utilisation; max-min shares the bus
    bound = core / latency_factor(mp.LOADED_LATENCY, core / node)
    share = bound if bound + core <= node else \
        (bound if bound < node / 2 else node - core if core < node / 2 else node / 2)
    add("triad bandwidth of core 0 next to stress-ng --vm on core 1", "GB/s", pr["bw_1core_next_to_vm"] / 1e9,
        share / 1e9)
    for reg in regimes:
        p0, p1 = pred[f"1rank-{reg}"], pred[f"1rank-{reg}-vm"]
        add(f"1 rank, particles {reg}: total time, no stress", "s", nb[reg]["sim_time_s"], p0["sim_time_s"])
        add(f"1 rank, particles {reg}: total time, stress-ng --vm on the other core", "s", ns[reg]["sim_time_s"],
            p1["sim_time_s"])
        add(f"1 rank, particles {reg}: stressed rank's slowdown (load with / without)", "x",
            load_of(ns[reg], 0) / load_of(nb[reg], 0), load_of(p1, 0) / load_of(p0, 0))
        # the same from the fastest runs: how much the noise of a shared machine moves the figure
        C[-1]["measured_fastest"] = min(load_of(r, 0) for r in stressed[reg]) / min(load_of(r, 0) for r in base[reg])
        add(f"1 rank, particles {reg}: throughput, no stress", "particle-steps/s", nb[reg]["particle_steps_per_s"],
            p0["particle_steps_per_s"])
        C[-1]["measured_fastest"] = max(r["particle_steps_per_s"] for r in base[reg])
    for reg in regimes:
        add(f"2 ranks (one per core), particles {reg}: total time", "s", n2[reg]["sim_time_s"],
            pred[f"2rank-{reg}"]["sim_time_s"])
    for reg in regimes:
        add(f"1 rank, particles {reg}: total time, second estimate (kernels measured here)", "s",
            nb[reg]["sim_time_s"], pred[f"1rank-{reg}-measured"]["sim_time_s"])
        add(f"2 ranks (one per core), particles {reg}: total time, second estimate", "s", n2[reg]["sim_time_s"],
            pred[f"2rank-{reg}-measured"]["sim_time_s"])
    if a.emulate:
        add("2 ranks (one on half a core), total time NOW", "s", emu["NOW"]["sim_time_s"], pred["2rank-NOW"]["sim_time_s"])
        add("2 ranks (one on half a core), total time RW", "s", emu["RW"]["sim_time_s"], pred["2rank-RW"]["sim_time_s"])
        add("load ratio rank 1 / rank 0 under NOW", "x", load_of(emu["NOW"], 1) / load_of(emu["NOW"], 0),
            load_of(pred["2rank-NOW"], 1) / load_of(pred["2rank-NOW"], 0))
        gm = (emu["NOW"]["sim_time_s"] - emu["RW"]["sim_time_s"]) / emu["NOW"]["sim_time_s"] * 100
        gp = (pred["2rank-NOW"]["sim_time_s"] - pred["2rank-RW"]["sim_time_s"]) / pred["2rank-NOW"]["sim_time_s"] * 100
        add("gain of RW over NOW", "%", gm, gp, "points")
        add("lambda under NOW (max interval)", "%", emu["NOW"]["lambda_max_percent"],
            pred["2rank-NOW"]["lambda_max_percent"], "points")
    for c in C:
        m, p = c["measured"], c["predicted"]
        c["error"] = (p - m) if c["error_kind"] == "points" else ((p - m) / m * 100 if m else None)

    allruns = [s for reg in regimes for s in base[reg] + stressed[reg] + two[reg]] + \
        [r for v in emu_runs.values() for r in v]
    loads = [s["_loadavg_before"] for s in allruns]
    notes = [
        f"Problem: {particles} particles, {steps} steps of 1e-8 s, repartition every {every} steps; median of "
        f"{repeats} native repeats kept; times are the time loop (summary sim_time_s: wall clock natively, simulated "
        "under SMPI).",
        f"Load average before the native runs: {min(loads):.2f} to {max(loads):.2f} on {ncpu} cores; CPU share of the "
        f"DEM processes: {min(r['_cpu_share'] for r in allruns):.2f} to {max(r['_cpu_share'] for r in allruns):.2f} "
        "(1.0: they had their cores to themselves). The median of the repeats is kept.",
        "Native stress: `" + " ".join(vm) + "`; SMPI: a vm stress actor (1 worker, 1e9 B per activity) on local-1, "
        "sharing local-membus with the rank. Particles 'in contact' is the study's benchmark (diameter 1.001 x "
        "spacing); 'apart' (0.99) has no contact forces, so its kernels mostly stream particle data.",
    ]
    for reg in regimes:
        notes.append(spread(f"native, particles {reg}, no stress", base[reg]))
        notes.append(spread(f"native, particles {reg}, with stress-ng --vm", stressed[reg]))
        notes.append(spread(f"native, 2 ranks (one per core), particles {reg}", two[reg]))
    for reg in regimes:
        seen = [(r["_core_times"], load_of(r, 1) / load_of(r, 0)) for r in two[reg] if r.get("_core_times")]
        if seen:
            notes.append(f"The two cores right before each 2-rank {reg} run (contact-force kernel alone on CPU 0 / "
                         "CPU 1, ms; the predictions assume them equal) and the run's load ratio rank 1 / rank 0: "
                         + "; ".join(f"{t[0] * 1e3:.1f} / {t[1] * 1e3:.1f} ms, ranks {q:.2f}" for t, q in seen) + ".")
    for pol, runs in emu_runs.items():
        notes.append(spread(f"native, 2 ranks, {pol}", runs))
    if a.emulate and a.emulate_with == "throttle":
        th = [r["_throttle_share"] for v in emu_runs.values() for r in v if r.get("_throttle_share")]
        notes.append("Emulated heterogeneity: rank 1 (pinned to core 1) is stopped and continued every 10 ms "
                     "(SIGSTOP/SIGCONT, as cpulimit does), so it runs half the time"
                     + (f" (realised: {min(th):.2f} to {max(th):.2f})" if th else "") + "; rank 0 is pinned to core 0. "
                     "The model gives rank 1 local-1half (half the core rate, half the per-core bandwidth).")
    elif a.emulate:
        notes.append("Emulated heterogeneity: rank 1 shares core 1 with `" + " ".join(hog) + "`; the model gives it "
                     "local-1half (half the core rate, half the per-core bandwidth).")
    shares = {f"1 rank {reg}": [r["_cpu_share"] for r in base[reg] + stressed[reg]] for reg in regimes}
    shares.update({f"2 ranks {pol}": [r["_cpu_share"] for r in runs] for pol, runs in emu_runs.items()})
    core_seen = {reg: [dict(cpu0_s=r["_core_times"][0], cpu1_s=r["_core_times"][1],
                            load_ratio=load_of(r, 1) / load_of(r, 0)) for r in two[reg] if r.get("_core_times")]
                 for reg in regimes}
    res = dict(command=cmdline, probe=pr, platform=plat, comparisons=C, notes=notes, cpu_share=shares,
               core_times=core_seen,
               setup=f"Machine: {ncpu} cores; native build `{a.native}`, SMPI build `{a.demsim}`.",
               wall_s=time.time() - t_start)
    # keep every invocation's figures: on a shared machine their spread is part of the result
    hist_path = os.path.join(out, "hardware-history.json")
    history = []
    if os.path.exists(hist_path):
        with open(hist_path) as f:
            history = json.load(f)
    history.append(dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), loadavg=[min(loads), max(loads)],
                        particles=particles, steps=steps, repeats=repeats,
                        comparisons=[{k: c[k] for k in ("what", "unit", "measured", "predicted")} for c in C]))
    with open(hist_path, "w") as f:
        json.dump(history, f, indent=1)
    res["history"] = history
    with open(os.path.join(out, "hardware.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "HARDWARE.md"), "w") as f:
        sys.path.insert(0, HERE)
        import report
        f.write("\n".join(report.hardware_section(res)) + "\n")
    for c in C:
        e = c["error"]
        print(f"  {c['what']}: measured {c['measured']:.4g} {c['unit']}, predicted {c['predicted']:.4g} "
              f"({'n/a' if e is None else ('%+.1f points' % e if c['error_kind'] == 'points' else '%+.1f %%' % e)})")
    print(f"hardware.py: {out}/hardware.json, HARDWARE.md ({res['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
