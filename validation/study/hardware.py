#!/usr/bin/python3
"""Validation on this machine: the native build against the SMPI prediction for this machine's platform.

    validation/study/hardware.py [--out DIR] [--quick] [--repeats R] [--demsim SMPI_LAUNCHER] [--native NATIVE_DEMSIM]

1. Probe: builds validation/probes/bwprobe.c and measures the triad bandwidth and kick-drift's streams
   on one core and on all cores (the per-core bandwidth is the lower of the two on one core: a
   core with more streams open may draw less than on the triad's three; the node's bus the larger
   of the two on all cores: the bus delivers at least either), one core's FP64 rate, its
   divider, gathers and page faults; then the contact-force kernel alone (calibrate_cost), which
   gives KERNEL_FLOPS_PER_CYCLE on this processor. Writes DIR/local-calibrated.xml,
   platforms/local.xml with these figures in place of its estimates (through
   platforms/make_platforms.py's own functions), the constant included: every figure of the
   calibrated platform is this machine's, measured in this invocation, so the check tests how the
   model composes them into whole runs (search, walls, integration, ghosts, repartitions, two
   ranks on one bus), not how far the rate per cycle of one processor generation carries to
   another (the sensitivity section of validation/REPORT.md shows that). Plus one host,
   local-1half, for the emulation below. The probe runs again after the native runs, and the
   platform takes the better figure of the two probes (a neighbour on the host can take the
   memory bus for minutes).
2. Co-located memory stress (the study's case 5 on one machine): one DEM rank pinned to core 0
   (taskset, one PoCL thread: POCL_MAX_PTHREAD_COUNT=1), without and with a real
   `stress-ng --vm 1 --vm-bytes 1G --vm-keep` pinned to core 1. The SMPI prediction runs the same
   scenario on host local-0 with a vm stress actor on local-1 of the calibrated platform.
   Reported: the total time (loop time) both ways and the stressed rank's slowdown (its
   computational load with stress over without), measured against predicted.
3. Emulated heterogeneity (case-1-like), on by default: two ranks, rank 0 alone on core 0, rank 1
   on core 1 running half the time: stopped and continued every 10 ms (SIGSTOP/SIGCONT, as cpulimit
   does; --emulate-with hog: sharing its core with `stress-ng --cpu 1` instead, which the scheduler
   undoes on a machine shared with other users by moving their processes to the other core). NOW
   and RW. Predicted with rank 1 on local-1half: with the Throttle, core 1 at its whole rate
   stopped half of every THROTTLE_PERIOD (cpu_share 0.5, cpu_period: the model's duty cycle,
   sim/quota.h); with the hog, half the core rate and half the per-core bandwidth (the
   scheduler's slices are short: a steady time-share). Reported: total times, the gain of RW, the
   load ratio of the two ranks under NOW.

4. Core watch: right before and right after each native run, the contact-force kernel alone on
   each core the run uses (calibrate_cost, one PoCL thread, pinned). A neighbour on the host can
   slow one core of this virtual machine for minutes; the median time of the check is the
   typical core, and each core's share around a run is that over its mean time then (at most 1). Every
   group is predicted twice: on the calibrated platform (the cores at their best), and on a
   platform giving each core its share around the median run (rate, per-core bandwidth, gathers,
   divider and page faults, as local-1half gets half): 'cores as measured around the run'. A
   memory watch beside it (kick-drift, a streaming kernel) gives each core a memory share too,
   which that platform applies to the core's per-core bandwidth and gathers (a neighbour can take
   the bus and leave the core's arithmetic alone).
   The watch samples only a run's edges; the equal-core 2-rank groups are predicted a third time
   with the shares their median run's ranks saw (each rank's load per particle against the
   faster rank's): 'cores as measured in the run'.

Each native measurement is repeated (--repeats, default 5) and the median run kept; the spread,
the load average before each run and the CPU share the run's processes obtained are reported (on
a machine shared with other users they decide whether the comparison means anything), and so is
the processor (/proc/cpuinfo: a virtual machine of one kind lands on hosts of different processor
generations, and the kernels' rate per cycle moves with them). The report counts the four plain
total-time rows (1 and 2 ranks, contact and apart) within +-15 % of the measurement.
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
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "platforms"))
sys.path.insert(0, HERE)
from sweep import QUIET_SHARE, best_of, core_shares, quiet  # noqa: E402,F401  (the runs' statistics)

VM = ["taskset", "-c", "1", "stress-ng", "--quiet", "--vm", "1", "--vm-bytes", "1G", "--vm-keep"]
CPU_LATENCY = 5e-6  # make_platforms.CPU_LAUNCH_LATENCY
MATERIAL = "material = { youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; density = 2500.0; };"


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def build_probe(out):
    exe = os.path.join(out, "bwprobe")
    cc = shutil.which("cc") or shutil.which("gcc")
    p = sh([cc, "-std=gnu11", "-O3", "-march=native", "-ffp-contract=fast", "-pthread",
            os.path.join(TOP, "validation", "probes", "bwprobe.c"), "-o", exe])
    if p.returncode:
        raise SystemExit(f"hardware.py: cannot build the probe:\n{p.stdout}")
    return exe


# the figures the probe measures (each the best of its repeats)
PROBED = ("bw_1core", "stream_1core", "bw_allcore", "stream_allcore", "flops_1core", "scalar_1core", "gather_1core",
          "lattice_1core", "divider_1core", "flops_allcore_per_thread", "first_touch")


def probe(exe, repeats, ncpu, mib):
    best = {k: 0.0 for k in PROBED}
    for r in range(repeats):
        gather = ["--gather", "--first-touch", "--streams"] if r == 0 else []
        one = json.loads(sh(["taskset", "-c", "0", exe, "--threads", "1", "--mib", str(mib)] + gather).stdout)
        pingpong = ["--pingpong"] if r == 0 and ncpu >= 2 else []
        allc = json.loads(sh([exe, "--threads", str(ncpu), "--mib", str(mib), "--streams"] + pingpong).stdout)
        if pingpong:  # a cache line between cores 0 and 1: tens of ns under one L3, hundreds across chiplets
            best["pingpong_ns"] = allc["pingpong_round_trip_ns"]
        # bus traffic (write-allocate counted), as sim/cost.c counts the kernels' traffic
        best["bw_1core"] = max(best["bw_1core"], one["triad_bus_Bps"])
        best["bw_allcore"] = max(best["bw_allcore"], allc["triad_bus_Bps"])
        # kick-drift's pattern on every core at once: the bus delivers at least that
        best["stream_allcore"] = max(best["stream_allcore"], allc["streams_Bps"])
        best["flops_1core"] = max(best["flops_1core"], one["flops_per_thread"])
        best["scalar_1core"] = max(best["scalar_1core"], one["scalar_flops_per_thread"])  # the same FMAs, scalar
        best["divider_1core"] = max(best["divider_1core"], one["divider_per_thread"])
        # every core busy at once: below the 1-core figure when the cores share a physical one
        best["flops_allcore_per_thread"] = max(best["flops_allcore_per_thread"], allc["flops_per_thread"])
        if gather:
            best["gather_1core"] = one["random_lines_per_s"] * 64.0
            best["lattice_1core"] = one["lattice_Bps"]
            best["first_touch"] = one["first_touch_Bps"]  # new memory mapped at its first write
            best["stream_1core"] = one["streams_Bps"]  # kick-drift's six streams in, three out
        best["lanes"] = one["lanes"]
    best["threads_all"] = ncpu
    best["mib"] = mib
    return best


def clock_and_lanes(pr):
    """The core's clock and simd_lanes (make_platforms.clock_and_lanes): the clock from the probe's
    FMA loops; the lanes from the C reference's pair pass over the kernel's once reference_ratio
    has measured it, before that (and where it fails) the FMA loops' ratio; a probe without the
    scalar loop: no lanes."""
    import make_platforms as mp
    return mp.clock_and_lanes(pr["flops_1core"], pr.get("scalar_1core"), pr["lanes"], pr.get("scalar_over_lanes"))


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
    bw = min(cores * core_bw_of(pr), node_bw_of(pr))
    divider_s = divsqrt / (cores * pr["divider_1core"])
    import make_platforms as mp
    rate = mp.kernel_rate(best, flops, traffic, divsqrt, bw, pr["divider_1core"], cores)
    clock = clock_and_lanes(pr)[0]
    return dict(kernel_row=row, kernel_flops=flops, kernel_traffic=traffic, kernel_best_s=best,
                kernel_divsqrt=divsqrt, kernel_divider_s=divider_s,
                kernel_rate=rate, clock_hz=clock, kernel_flops_per_cycle=rate / clock)


def sh_1core(cmd, cpu):
    """cmd on one core: one PoCL thread, pinned to `cpu` where taskset exists."""
    taskset = shutil.which("taskset")
    return sh(([taskset, "-c", str(cpu)] if taskset else []) + cmd, env=dict(os.environ, POCL_MAX_PTHREAD_COUNT="1"))


def kernel_1core(plat, exe, cpu, reps, side, packing="contact", kernel="forces_all", extra=()):
    """A kernel on one core (sh_1core), by default the contact-force kernel: its best time over
    reps, s; None when calibrate_cost fails (its output in the second value)."""
    p = sh_1core([exe, "--platform", plat, "--host", "local-0", "--sizes", str(side), "--packings", packing,
                  "--reps", str(reps)] + list(extra), cpu)
    if p.returncode:
        return None, p.stdout
    row = next(l for l in p.stdout.splitlines() if l.startswith(packing) and f" {kernel} " in l)
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


def opencl_lanes(pr, calibrate_cost):
    """validation/lanesprobe (built beside calibrate_cost): the FP64 rate of 8 double8 FMA chains
    on one work-item of the OpenCL device, one PoCL thread pinned to core 0 -- the width the
    kernels' compiler gives code in lanes of eight; over the scalar FMA loop, the lanes it
    realises (recorded beside the platform's simd_lanes: the datapath's width, not the DEM's). {} when
    the probe is not built or fails."""
    exe = os.path.join(os.path.dirname(calibrate_cost), "lanesprobe")
    if not os.access(exe, os.X_OK):
        return {}
    p = sh_1core([exe, "--seconds", "1"], 0)
    if p.returncode:
        print(f"hardware.py: lanesprobe failed (not recorded):\n{p.stdout}", flush=True)
        return {}
    rate = json.loads(p.stdout.strip().splitlines()[-1])["cl_vector_flops"]
    lanes = f", {rate / pr['scalar_1core']:.2f} x the scalar FMA loop" if pr.get("scalar_1core") else ""
    print(f"hardware.py: the OpenCL device's double8 FMA loop {rate / 1e9:.1f} GF/s on one core{lanes}", flush=True)
    return dict(cl_vector_1core=rate)


def reference_ratio(pr, plat, calibrate_cost, side=60, reps=5):
    """calibrate_cost --reference 1 on one core (one PoCL thread, pinned to core 0), particles in
    contact: the C reference's pair pass (scalar code) over the kernel's on the same particles --
    how many times slower scalar code does the kernels' work here: the calibrated platform's
    simd_lanes (clock_and_lanes; the FMA loops' ratio bounds it). calibrate_cost's particles move
    at random, so their contacts slide or stick and the scalar friction branch is mispredicted;
    at rest the ratio is lower (1.75 against 2.6 on a Zen 5 core: BENCHMARKS.md). {} when it fails."""
    best, text = kernel_1core(plat, calibrate_cost, 0, reps, side, extra=["--reference", "1"])
    row = next((l for l in (text or "").splitlines() if " forces_ref " in l), None)
    if best is None or row is None:
        print("hardware.py: the C reference's pair pass not timed (not recorded)", flush=True)
        return {}
    ratio = float(row.rsplit(None, 1)[-1])
    lanes = pr["flops_1core"] / pr["scalar_1core"] if pr.get("scalar_1core") else None
    print(f"hardware.py: the C reference's pair pass {ratio:.2f} x the kernel's time on one core"
          + (f" (the FMA loops' lanes: {lanes:.2f})" if lanes else ""), flush=True)
    return dict(scalar_over_lanes=ratio)


class CoreWatch:
    """The contact-force kernel alone on each core a native run uses, right before and right after
    the run (calibrate_cost, one PoCL thread, pinned). A neighbour on the host can slow one of
    this virtual machine's cores for minutes; the median of all the check's times is the typical
    core, and a core's share during a run is that time over its mean time around the run, at
    most 1 (a core as fast as usual keeps all of it; the noise of the measurement, a few per
    cent either side of the median, moves nothing). The same for the core's memory: kick-drift,
    a streaming kernel bound by the core's bandwidth, over 262,144 particles apart (_mem): a
    neighbour can take the bus and leave the core's arithmetic alone. Disabled (no shares) when
    calibrate_cost is not built."""

    def __init__(self, plat, exe, reps=5, side=50, mem_side=64):
        self.plat, self.reps, self.side, self.mem_side = plat, reps, side, mem_side
        self.exe = exe if os.access(exe, os.X_OK) else None

    def times(self, cpus, mem=False):
        if not self.exe:
            return {}
        args = (self.mem_side, "apart", "kick_drift") if mem else (self.side,)
        t = {cpu: kernel_1core(self.plat, self.exe, cpu, self.reps, *args)[0] for cpu in cpus}
        return {} if None in t.values() else t

    def around(self, run, cpus):
        """run() between two measurements of `cpus`; its summary gets _cores and _cores_mem
        {cpu: [before, after]}."""
        before, before_mem = self.times(cpus), self.times(cpus, True)
        s = run()
        after, after_mem = self.times(cpus), self.times(cpus, True)
        s["_cores"] = {str(c): [before[c], after[c]] for c in cpus if c in before and c in after}
        s["_cores_mem"] = {str(c): [before_mem[c], after_mem[c]] for c in cpus if c in before_mem and c in after_mem}
        return s


def core_typical(groups, key="_cores"):
    """The median core time of the check (key "_cores_mem": of its memory): the typical core (a
    slowed core is the exception)."""
    t = sorted(x for runs in groups.values() for r in runs for v in r.get(key, {}).values() for x in v)
    return t[(len(t) - 1) // 2] if t else None


def run_shares(run):
    """{cpu: share} of a 2-rank run's cores from the run itself: each rank's compute time (load) per
    particle against the fastest rank's, at most 1 (rank r runs on CPU r). A core slowed in the
    middle of a run, which the watch at the run's edges does not see, shows here. Meaningful only
    where the ranks do equal work per particle on equal cores (the lattice cut in two halves)."""
    per = {int(r["rank"]): r["load_s"] / r["particles"] for r in run.get("per_rank", []) if r.get("particles")}
    if len(per) < 2 or min(per.values()) <= 0.0:
        return {}
    best = min(per.values())
    return {rank: best / v for rank, v in per.items()}


def node_bw_of(pr):
    """The node's memory bus: the larger of what the triad and kick-drift's pattern draw on all
    cores at once (the bus delivers at least either; the triad's write-allocated stores can leave
    it below the DEM's in-place streams). Without the streams figure, the triad's."""
    return max(pr["bw_allcore"], pr.get("stream_allcore") or 0.0)


def core_bw_of(pr):
    """The bandwidth one core draws for the DEM kernels (make_platforms.measured_core_bw)."""
    import make_platforms as mp
    return mp.measured_core_bw(pr["bw_1core"], pr.get("stream_1core"), node_bw_of(pr))


def kernel_rate_per_cycle(pr):
    """The core-rate constant of this machine's calibrated platform: the one this invocation
    measured (the contact-force kernel on this processor), else the platforms' (before it is
    measured)."""
    import make_platforms as mp
    return pr.get("kernel_flops_per_cycle") or mp.KERNEL_FLOPS_PER_CYCLE


def calibrated_platform(pr, path, shares=None, why=None, mem_shares=None, quota_period=None):
    """platforms/local.xml rebuilt with the measured figures, plus local-1half. shares {cpu: s}:
    core cpu (host local-<cpu>) gets s of its rate, per-core bandwidth, gathers, divider and
    page-fault rate, as a core time-shared with something else (local-1half: 0.5 of core 1's
    share); mem_shares {cpu: m}: besides, m of its per-core bandwidth and gathers (a bus taken by
    a neighbour); why: a line for the header saying what the shares are. quota_period: local-1half
    is core 1 at its whole rate with cpu_share 0.5 per quota_period instead (the Throttle's duty
    cycle: sim/quota.h)."""
    import make_platforms as mp
    shares, mem_shares = shares or {}, mem_shares or {}
    bw, core_bw, peak = node_bw_of(pr), core_bw_of(pr), pr["flops_1core"]
    # the probe's FMA loops give the core's clock (clock_and_lanes); the DEM kernels run at
    # KERNEL_FLOPS_PER_CYCLE per clock cycle; the constant is this invocation's own measurement once made
    # (the kernels' rate per cycle moves with the processor generation), else make_platforms.py's
    clock, lanes = clock_and_lanes(pr)
    flops_per_cycle_peak = peak / clock
    k = kernel_rate_per_cycle(pr)
    k_from = ("measured on this machine by this check" if pr.get("kernel_flops_per_cycle") else
              "make_platforms.py's")
    flops = peak / flops_per_cycle_peak * k
    header = [
        "This machine, CALIBRATED by validation/study/hardware.py (validation/probes/bwprobe.c), from",
        "platforms/make_platforms.py's local platform with its estimates replaced by measurements:",
        f"memory bandwidth {bw / 1e9:.3g} GB/s (the larger of the triad and kick-drift's streams, {pr['threads_all']} threads);",
        f"per-core bandwidth {core_bw / 1e9:.3g} GB/s (the lower of the two, 1 thread); missed",
        f"gathers {pr['gather_1core'] / 1e9:.3g} GB/s per core; core FP64 peak {peak / 1e9:.3g} GF/s (FMA loop), so a",
        f"{peak / flops_per_cycle_peak / 1e9:.3g} GHz clock and {flops / 1e9:.3g} GF/s for the DEM kernels",
        f"(KERNEL_FLOPS_PER_CYCLE {k:.3g}, {k_from});",
        f"divider {pr['divider_1core'] / 1e9:.3g} G lanes/s per core (divide / square-root loop);",
    ] + ([f"simd_lanes {lanes:.3g}: the C reference's pair pass over the kernel's (calibrate_cost's reference pass;"
          f" the FMA loop over the same loop in scalar code, {pr['flops_1core'] / pr['scalar_1core']:.3g}, bounds it);"]
         if lanes and pr.get("scalar_over_lanes") else
         [f"simd_lanes {lanes:.3g}: the FMA loop over the same loop in scalar code ({pr['scalar_1core'] / 1e9:.3g} GF/s);"]
         if lanes else []) + [
        f"new memory mapped at its first write at {pr['first_touch'] / 1e9:.3g} GB/s (a page fault per 4 KiB).",
    ] + ([f"Zoltan RCB in the solver's configuration {pr['partition_rate'] / 1e6:.3g} M particle-levels/s per core "
          "(partition_rate: a short 2-rank native run, the whole call)."] if pr.get("partition_rate") else []) + [
        "launch_latency stays the platform author's estimate. local-1half: rank 1's half core, for the",
        "emulated heterogeneity: " + ("core 1 at its whole rate, stopped half of every "
                                      f"{quota_period * 1e3:g} ms (cpu_share 0.5, cpu_period: the Throttle's duty cycle)."
                                      if quota_period else
                                      "one core time-shared with a CPU hog (half its rate and per-core bandwidth)."),
    ]
    net = mp.probe_network(pr.get("pairs", []))
    header += net["doc"][:1]
    if why:
        header += ["", why] + [f"local-{c}: {s:.3f} of the core (rate, per-core bandwidth, gathers, divider, page faults)."
                               for c, s in sorted(shares.items())]
        header += [f"local-{c}: besides, {m:.3f} of its per-core bandwidth and gathers (memory-bound watch)."
                   for c, m in sorted(mem_shares.items()) if m < 1.0]

    def core(host, cname, cores, s, m=1.0):
        return dict(host=host, cores=cores, flops=flops * s,
                    props=mp.container_props(cname, "local", "local", core_bw * s * m, latency=mp.CPU_LAUNCH_LATENCY,
                                             llc=mp.LOCAL_LLC, cores=cores, gather=pr["gather_1core"] * s * m,
                                             divider=pr["divider_1core"] * s, first_touch=pr["first_touch"] * s,
                                             partition=pr.get("partition_rate", 0.0) * s, lanes=lanes))
    node = mp.simple_node("local", "local", bw, flops, core_bw, [("local", 2, "local-2core")],
                          ["the machine: node 'local', memory bus local-membus"],
                          latency=mp.CPU_LAUNCH_LATENCY, llc=mp.LOCAL_LLC, gather=pr["gather_1core"],
                          divider=pr["divider_1core"], first_touch=pr["first_touch"],
                          partition=pr.get("partition_rate"), lanes=lanes)
    node["containers"][:0] = [core("local-0", "local-1core", 1, shares.get(0, 1.0), mem_shares.get(0, 1.0)),
                              core("local-1", "local-1core", 1, shares.get(1, 1.0), mem_shares.get(1, 1.0))]
    if quota_period:
        half = core("local-1half", "local-1half", 1, shares.get(1, 1.0), mem_shares.get(1, 1.0))
        half["props"] += [("cpu_share", "0.5"), ("cpu_period", f"{quota_period:g}")]
    else:
        half = core("local-1half", "local-1half", 1, 0.5 * shares.get(1, 1.0), mem_shares.get(1, 1.0))
    node["containers"].append(half)
    with open(path, "w") as f:
        f.write(mp.platform("local", header, [node], net=net))
    return path


def scenario(path, name, platform, hosts, particles, steps, every, metrics_every, stress=None, ratio=1.001):
    lines = [f'name = "{name}";',
             f'description = "hardware validation ({name}), written by validation/study/hardware.py";',
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


# s: the Throttle's duty cycle, running share x this, stopped the rest; local-1half's cpu_period
THROTTLE_PERIOD = 0.02


def half_period(a):
    """local-1half's quota period: the Throttle's with --emulate-with throttle (a duty cycle, as a CFS
    quota: sim/quota.h); None with a CPU hog beside rank 1 (the scheduler's slices: a steady half rate)."""
    return THROTTLE_PERIOD if getattr(a, "emulate_with", "throttle") == "throttle" else None


class Throttle:
    """Duty-cycles a process with SIGSTOP / SIGCONT so that it runs `share` of the wall time (what
    cpulimit does): a slower container whatever else runs on the machine, unlike a CPU hog beside
    it, whose effect the scheduler undoes by moving other users' processes onto the other core.
    The process writes its PID to `pidfile` (sh -c 'echo $$ > F; exec ...')."""

    def __init__(self, pidfile, share=0.5, period=None):
        self.pidfile, self.share, self.period = pidfile, share, period or THROTTLE_PERIOD
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


def spread(label, runs):
    t = sorted(r["sim_time_s"] for r in runs)
    sh_ = [r["_cpu_share"] for r in runs]
    return (f"{label}: {len(t)} runs, {t[0]:.3g} / {t[(len(t) - 1) // 2]:.3g} / {t[-1]:.3g} s (min / median / max), "
            f"CPU share {min(sh_):.2f} to {max(sh_):.2f}")


def load_of(s, rank):
    return next(r["load_s"] for r in s["per_rank"] if r["rank"] == rank)


REGIMES = {"contact": 1.001, "apart": 0.99}
VM_ACTOR = '{ host = "local-1"; kind = "vm"; workers = 1; bytes = 1.0e9; }'
HOG = ["taskset", "-c", "1", "stress-ng", "--quiet", "--cpu", "1", "--cpu-method", "fft"]


def parse_args():
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
    a.particles = a.particles or (4000 if a.quick else 20000)
    a.steps = a.steps or (100 if a.quick else 400)
    a.repeats = a.repeats or (1 if a.quick else 5)
    a.every = max(a.steps // 4, 1)
    a.out = os.path.abspath(a.out)
    return a


def cpu_identity(path="/proc/cpuinfo"):
    """This machine's processor as its kernel names it: a virtual machine of the same kind can land
    on hosts of different processor generations, and the kernels' rate per cycle moves with them,
    so every check records which it ran on. {} where the file is absent (not Linux)."""
    try:
        with open(path) as f:
            first = f.read().split("\n\n")[0]
    except OSError:
        return {}
    kv = dict((k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in first.splitlines()) if _)
    flags = kv.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "AVX" if "avx" in flags else "-"
    return dict(model_name=kv.get("model name", "?"), family=kv.get("cpu family", "?"), model=kv.get("model", "?"),
                isa=isa, text=f"{kv.get('model name', '?')}, family {kv.get('cpu family', '?')} model "
                          f"{kv.get('model', '?')}, {isa}")


def probe_phase(a, out, ncpu):
    """The probe, the calibrated platform and the kernel's own rate (calibrate_cost)."""
    print("hardware.py: probe", flush=True)
    exe = build_probe(out)
    pr = probe(exe, a.repeats, ncpu, 64 if a.quick else 256)
    pr["cpu"] = cpu_identity()
    with Background(VM):
        pr["bw_1core_next_to_vm"] = max(
            json.loads(sh(["taskset", "-c", "0", exe, "--threads", "1", "--mib", str(64 if a.quick else 256)]).stdout)
            ["triad_bus_Bps"] for _ in range(a.repeats))
    pr["pairs"] = network_pairs(a, out)
    plat = calibrated_platform(pr, os.path.join(out, "local-calibrated.xml"), quota_period=half_period(a))
    print(f"hardware.py: triad 1 core {pr['bw_1core'] / 1e9:.2f} GB/s, {ncpu} cores {pr['bw_allcore'] / 1e9:.2f} GB/s "
          f"(bus traffic), kick-drift's streams 1 core {pr['stream_1core'] / 1e9:.2f} GB/s, {ncpu} cores "
          f"{pr['stream_allcore'] / 1e9:.2f} GB/s, missed gathers {pr['gather_1core'] / 1e9:.2f} GB/s per core, lattice gathers "
          f"{pr['lattice_1core'] / 1e9:.2f} GB/s, FP64 {pr['flops_1core'] / 1e9:.1f} GF/s per core "
          f"({pr['flops_allcore_per_thread'] / 1e9:.1f} with all cores busy), divider "
          f"{pr['divider_1core'] / 1e9:.2f} G lanes/s, new memory {pr['first_touch'] / 1e9:.2f} GB/s; {plat}", flush=True)
    if os.access(a.calibrate_cost, os.X_OK):
        pr.update(kernel_flops_per_cycle(pr, plat, a.calibrate_cost))
        print(f"hardware.py: contact-force kernel {pr['kernel_rate'] / 1e9:.2f} GF/s per core at "
              f"{pr['clock_hz'] / 1e9:.2f} GHz: KERNEL_FLOPS_PER_CYCLE measured {pr['kernel_flops_per_cycle']:.2f}"
              f" (make_platforms.py: {__import__('make_platforms').KERNEL_FLOPS_PER_CYCLE})", flush=True)
        pr.update(kernel_scaling(pr, plat, a.calibrate_cost))
        pr.update(opencl_lanes(pr, a.calibrate_cost))
        pr.update(reference_ratio(pr, plat, a.calibrate_cost))
        print(f"hardware.py: the same kernel on both cores {pr['kernel_scaling']:.2f} x faster than on one", flush=True)
        pr["platform_takes_measured_constant"] = True
        calibrated_platform(pr, plat, quota_period=half_period(a))  # now with this machine's own constant
    return pr, plat


def network_pairs(a, out):
    """MPI ping-pongs between two ranks of this machine, through the native build's own probe
    (`demsim probe --hosts localhost,localhost --quick --no-kernels`: 8 B to 8 MiB, the medians):
    the calibrated platform's container links then carry what Open MPI's shared-memory transport
    measured instead of make_platforms.py's estimate of a Linux bridge (2.5 GB/s, 10 us a link),
    through make_platforms.probe_network as for `demsim probe`'s platforms. [] (the estimate kept)
    when the probe cannot run: it needs demsim-bwprobe beside the native build."""
    if not os.access(os.path.join(os.path.dirname(a.native), "demsim-bwprobe"), os.X_OK):
        print(f"hardware.py: no demsim-bwprobe beside {a.native}: the container links keep their estimate", flush=True)
        return []
    d = os.path.join(out, "netprobe")
    r = subprocess.run([a.native, "probe", "--hosts", "localhost,localhost", "--quick", "--no-kernels", "--out", d],
                       capture_output=True, text=True)
    try:
        with open(os.path.join(d, "probe.json")) as f:
            pairs = [p for p in json.load(f).get("pairs", []) if p.get("latency_s") and p.get("bandwidth_Bps")]
    except (OSError, ValueError):
        pairs = []
    if r.returncode or not pairs:
        print(f"hardware.py: the MPI ping-pong failed (demsim probe: {r.stderr.strip()[-300:]}): the container links "
              "keep their estimate", flush=True)
        return []
    print(f"hardware.py: MPI ping-pong between the two cores: {pairs[0]['latency_s'] * 1e6:.2f} us one way, "
          f"{pairs[0]['bandwidth_Bps'] / 1e9:.2f} GB/s (8 MiB)", flush=True)
    return pairs


def keep_faster_kernel(pr, k, ref, clock):
    """pr (the first kernel measurement, kernel_rate) and k (the second): the faster kept, with ref
    (its probe's reference ratio) when it is k; the rate per cycle of both expressed at `clock`
    (the probes' larger FMA figure), so that the platform's core rate, clock x the constant, is
    the kernel's best measured rate. (Keeping the larger rate per cycle, each over its own probe's
    clock, passed a disturbed FMA loop's slow clock on to the faster one: 2026-12-05, 10.92 GF/s at
    3.19 GHz = 3.44, times 3.47 GHz = 11.95 GF/s against 11.3 measured after the runs.)"""
    pr["kernel_rate_first"], pr["kernel_rate_again"] = pr["kernel_rate"], k["kernel_rate"]
    pr["kernel_flops_per_cycle_first"] = pr["kernel_rate"] / clock
    pr["kernel_flops_per_cycle_again"] = k["kernel_rate"] / clock
    if k["kernel_rate"] > pr["kernel_rate"]:
        pr.update(k)
        pr.update(ref)
    pr["clock_hz"], pr["kernel_flops_per_cycle"] = clock, pr["kernel_rate"] / clock


def reprobe(a, pr, ncpu, plat, log=None):
    """The probe again, after the native runs: a neighbour on the host can take the memory bus for
    minutes (the bus bandwidth of one check's probe came out at 56 GB/s against 76-99 in the others
    that day), so the calibrated platform takes the better of the two probes of each figure, as
    each probe takes the best of its repeats; both are recorded (probe_first, probe_again). The
    contact-force kernel's rate and Zoltan's rate are measured again as well, and the larger of each
    kept (the kernel's per cycle of the final clock); the reference ratio too, and the one of the
    quieter probe (its kernel the faster) kept."""
    print("hardware.py: probe again", flush=True)
    again = probe(os.path.join(a.out, "bwprobe"), a.repeats, ncpu, 64 if a.quick else 256)
    pr["probe_first"] = {k: pr[k] for k in PROBED}
    pr["probe_again"] = {k: again[k] for k in PROBED}
    for k in PROBED:
        pr[k] = max(pr[k], again[k])
    if pr.get("kernel_flops_per_cycle") and os.access(a.calibrate_cost, os.X_OK):
        # the constant too: one disturbed calibrate step would otherwise carry into every prediction
        # (2.31 against 2.6-3.0 in the other checks of 2026-12-05 on this processor)
        k = kernel_flops_per_cycle(pr, plat, a.calibrate_cost)
        # the reference ratio (the platform's simd_lanes) again beside it: a disturbed probe moves it
        # either way (2.03-2.12 against 2.57-2.63 quiet on one Zen 5 core), so the one of the probe
        # whose contact-force kernel ran faster (the quieter) is kept
        ref = reference_ratio(pr, plat, a.calibrate_cost) if pr.get("scalar_over_lanes") else {}
        if ref:
            pr["scalar_over_lanes_first"] = pr["scalar_over_lanes"]
            pr["scalar_over_lanes_again"] = ref["scalar_over_lanes"]
        keep_faster_kernel(pr, k, ref, clock_and_lanes(pr)[0])
        print(f"hardware.py: contact-force kernel measured again {k['kernel_rate'] / 1e9:.2f} GF/s per core (first "
              f"{pr['kernel_rate_first'] / 1e9:.2f}; the platform takes the faster): KERNEL_FLOPS_PER_CYCLE "
              f"{pr['kernel_flops_per_cycle']:.2f} at {pr['clock_hz'] / 1e9:.2f} GHz", flush=True)
    if pr.get("partition_rate") and log:
        # Zoltan's rate too: 4.8 M particle-levels/s in one check of 2026-12-05 against 7.2-7.3 in the
        # others on the same processor, and the repartitions of every 2-rank prediction follow it
        again_rate = partition_rate(a, a.out, plat, log, "-again")
        pr["partition_rate_first"], pr["partition_rate_again"] = pr["partition_rate"], again_rate
        pr["partition_rate"] = max(pr["partition_rate"], again_rate)
        print(f"hardware.py: Zoltan RCB measured again {again_rate / 1e6:.1f} M particle-levels/s (first "
              f"{pr['partition_rate_first'] / 1e6:.1f}; the platform takes the larger)", flush=True)
    calibrated_platform(pr, plat, quota_period=half_period(a))


def run_specs(emulate):
    """The measured groups, in the order they run: name -> hosts (the model), cores (native),
    stress, diameter ratio, policy. Particles 'in contact' is the study's benchmark (contact forces
    dominate); 'apart' has no contact (the kernels stream particle data: the memory-bound end)."""
    specs = {}
    for reg, ratio in REGIMES.items():
        specs[f"1rank-{reg}"] = dict(cfg=f"hw-1rank-{reg}", hosts=["local-0"], cpus=[0], ratio=ratio)
        # natively the stress is stress-ng beside the run, so the native run reads the scenario without
        # the stress actor (a native demsim would run the actor's load itself, on the rank's core)
        specs[f"1rank-{reg}-vm"] = dict(cfg=f"hw-1rank-{reg}-vm", hosts=["local-0"], cpus=[0], ratio=ratio,
                                        stress=VM_ACTOR, native_cfg=f"1rank-{reg}")
    for reg, ratio in REGIMES.items():
        specs[f"2rank-{reg}"] = dict(cfg=f"hw-2rank-{reg}", hosts=["local-0", "local-1"], cpus=[0, 1], ratio=ratio)
    if emulate:
        for pol in ("NOW", "RW"):
            specs[f"2rank-{pol}"] = dict(cfg="hw-2rank", hosts=["local-0", "local-1half"], cpus=[0, 1], ratio=1.001,
                                         policy=pol, emulated=True)
    return specs


def write_scenario(a, out, spec, plat, suffix=""):
    name = spec["cfg"] + suffix
    return scenario(os.path.join(out, name + ".cfg"), name, plat, spec["hosts"], a.particles, a.steps, a.every,
                    max(a.every // 5, 1), spec.get("stress"), ratio=spec["ratio"])


def mpirun_cmd():
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "POCL_MAX_PTHREAD_COUNT=1"]
    return cmd[:1] + ["--allow-run-as-root"] + cmd[1:] if os.geteuid() == 0 else cmd


def partition_rate(a, out, plat, log, tag=""):
    """Zoltan RCB's rate on this machine, in the solver's own configuration: a short native run of
    two ranks (one per core, particles in contact: the study's benchmark) that repartitions every
    few steps; the slowest rank's time in Zoltan_LB_Partition per call (summary wall_partition_s, the first call excluded) over
    the particle-levels of a call (share x (ceil(log2 ranks) + 1), sim/cost.c), best of the
    repeats. The rate covers the whole call, its scratch's page faults included (the platform's
    partition_rate, sim/host.h): RCB's cost per particle-level differs between processors (a
    Zen 4 core here against the calibration host of sim/cost.c's RCB constants). The calls of a run
    with the particles apart took 51-70 ms against 75-100 in contact (2 x 250,000 particles, Zen 5
    guest, 2026-12-05): their scratch faulted 3,000-3,300 pages a call against 4,887 (glibc's heap
    is in another state there), which the rate of the contact runs over-charges."""
    steps, every = 20, 4
    cfg = scenario(os.path.join(out, "hw-partition.cfg"), "hw-partition", plat, ["local-0", "local-1"], a.particles,
                   steps, every, every, ratio=REGIMES["contact"])
    best = 0.0
    for i in range(a.repeats):
        d = os.path.join(out, f"native-partition{tag}-{i}")
        app = [a.native, "run", cfg, "--out", d, "--quiet"]
        cmd = mpirun_cmd() + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1", "taskset", "-c", "1"] + app
        s = run_native(cmd, d, log, dict(os.environ, POCL_MAX_PTHREAD_COUNT="1"), cores=2)
        if s["repartitions"] > 0 and s["wall_partition_s"] > 0:
            levels = a.particles / 2 * (1 + 1)  # a rank's share x (one bisection level + the dots' pass)
            best = max(best, levels / (s["wall_partition_s"] / s["repartitions"]))
    return best


def native_run(a, name, spec, cfg, i, out, log, watch):
    """One native measurement of a group, between two measurements of its cores."""
    env1 = dict(os.environ, POCL_MAX_PTHREAD_COUNT="1")
    d = os.path.join(out, f"native-{name}-{i}")
    app = [a.native, "run", cfg, "--policy", spec.get("policy", "NOW"), "--out", d, "--quiet"]
    if len(spec["cpus"]) == 1:
        def run():
            with Background(VM if spec.get("stress") else None):
                return run_native(["taskset", "-c", "0"] + app, d, log, env1)
        return watch.around(run, spec["cpus"])
    mpirun = mpirun_cmd()
    cmd = mpirun + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1", "taskset", "-c", "1"] + app
    if not spec.get("emulated"):
        return watch.around(lambda: run_native(cmd, d, log, env1, cores=2), spec["cpus"])
    pidfile = os.path.join(out, f"rank1-{spec['policy']}-{i}.pid")
    rank1 = ["sh", "-c", f'echo $$ > {pidfile}; exec "$@"', "sh", "taskset", "-c", "1"] + app
    cmd = mpirun + ["-np", "1", "taskset", "-c", "0"] + app + [":", "-np", "1"] + rank1

    def emulated():
        if a.emulate_with == "hog":
            with Background(HOG):
                return run_native(cmd, d, log, env1, cores=2)
        with Throttle(pidfile, 0.5) as th:
            r = run_native(cmd, d, log, env1, cores=2)
        r["_throttle_share"] = th.realised()
        return r
    return watch.around(emulated, spec["cpus"])


def native_phase(a, specs, cfgs, out, log, watch):
    """Every group's repeats; 1-rank groups interleave their runs without and with stress. Where
    the core watch saw a slowed core (quiet: the typical core is the median of the watch so far),
    up to as many extra rounds until each group of the set has its repeats of quiet runs; all
    runs are kept (best_of takes the median of the quiet ones)."""
    runs = {name: [] for name in specs}
    order = []
    for reg in REGIMES:
        order += [[f"1rank-{reg}", f"1rank-{reg}-vm"]]
    order += [[name] for name in specs if not name.startswith("1rank")]
    for names in order:
        for i in range(2 * a.repeats):
            typical = core_typical(runs)
            if i >= a.repeats and all(sum(quiet(r, typical) for r in runs[n]) >= a.repeats for n in names):
                break
            for name in names:
                extra = (f" (extra: {sum(quiet(r, typical) for r in runs[name])} quiet of its {a.repeats} so far)"
                         if i >= a.repeats else "")
                print(f"hardware.py: native, {name}, repeat {i + 1}/{a.repeats}{extra}", flush=True)
                cfg = cfgs[specs[name].get("native_cfg", name)]
                runs[name].append(native_run(a, name, specs[name], cfg, i, out, log, watch))
    return runs


def predict_phase(a, pr, specs, cfgs, out, log, med, typical, typical_mem=None):
    """The SMPI predictions: each group on the calibrated platform; the second estimate (kernels
    measured here) of the 1- and 2-rank groups; each group again on a platform with its median
    run's core shares (cores as measured around that run); the equal-core 2-rank groups once more
    with the shares their median run's ranks saw (run_shares)."""
    print("hardware.py: SMPI predictions", flush=True)
    jobs = [(name, cfgs[name], ["--policy", spec.get("policy", "NOW")]) for name, spec in specs.items()]
    # the second estimate (device.cost = measured): the kernels timed here and scaled by speed; this
    # machine's speed in the platforms' unit is the calibrated platform's own (clock x the constant)
    local_speed = pr["clock_hz"] * kernel_rate_per_cycle(pr)
    measured_opts = ["--set", "device.cost=measured", "--set", f"device.local_speed={local_speed:.6g}"]
    jobs += [(f"{n}-measured", cfgs[n], ["--policy", "NOW"] + measured_opts) for n in specs
             if not n.endswith("-vm") and not specs[n].get("emulated")]
    for name, spec in specs.items():
        sh_ = core_shares(med[name], typical)
        if not sh_:
            continue
        plat = calibrated_platform(pr, os.path.join(out, f"local-asrun-{name}.xml"), sh_,
                                   f"Cores as measured around the median run of {name} (hardware.py's core watch):",
                                   core_shares(med[name], typical_mem, "_cores_mem"), quota_period=half_period(a))
        cfg = write_scenario(a, out, spec, plat, f"-asrun-{name.split('-')[-1]}" if spec.get("emulated") else "-asrun")
        jobs.append((f"{name}-asrun", cfg, ["--policy", spec.get("policy", "NOW")]))
    for name, spec in specs.items():  # the equal-core 2-rank groups: the cores as the run itself saw them
        sh_ = run_shares(med[name]) if name.startswith("2rank-") and not spec.get("emulated") else {}
        if not sh_:
            continue
        plat = calibrated_platform(pr, os.path.join(out, f"local-inrun-{name}.xml"), sh_,
                                   f"Cores as the median run of {name} saw them (its ranks' loads per particle):",
                                   quota_period=half_period(a))
        jobs.append((f"{name}-inrun", write_scenario(a, out, spec, plat, "-inrun"), ["--policy", "NOW"]))
    pred = {}
    for name, cfg, extra in jobs:
        d = os.path.join(out, f"smpi-{name}")
        pred[name] = run_native([a.demsim, "run", cfg, "--out", d, "--quiet"] + extra, d, log)
    return pred


def comparisons(pr, specs, runs, med, pred):
    import make_platforms as mp
    C = []

    def add(what, unit, m, p, kind="relative"):
        C.append(dict(what=what, unit=unit, measured=m, predicted=p, error_kind=kind))

    node = node_bw_of(pr)  # the calibrated platform's bus
    core = min(pr["bw_1core"], node)  # the triad's own core
    # the triad's core beside the stress worker (sim/membus.c): its bound is one core's bandwidth
    # over the loaded-latency factor of the worker's utilisation; max-min shares the bus
    bound = core / latency_factor(mp.LOADED_LATENCY, core / node)
    share = bound if bound + core <= node else \
        (bound if bound < node / 2 else node - core if core < node / 2 else node / 2)
    add("triad bandwidth of core 0 next to stress-ng --vm on core 1", "GB/s", pr["bw_1core_next_to_vm"] / 1e9,
        share / 1e9)
    t = lambda name, p=pred: (med[name]["sim_time_s"], p[name]["sim_time_s"])  # noqa: E731
    for reg in REGIMES:
        b, v = f"1rank-{reg}", f"1rank-{reg}-vm"
        add(f"1 rank, particles {reg}: total time, no stress", "s", *t(b))
        add(f"1 rank, particles {reg}: total time, stress-ng --vm on the other core", "s", *t(v))
        add(f"1 rank, particles {reg}: stressed rank's slowdown (load with / without)", "x",
            load_of(med[v], 0) / load_of(med[b], 0), load_of(pred[v], 0) / load_of(pred[b], 0))
        # the same from the fastest runs: how much the noise of a shared machine moves the figure
        C[-1]["measured_fastest"] = min(load_of(r, 0) for r in runs[v]) / min(load_of(r, 0) for r in runs[b])
        add(f"1 rank, particles {reg}: throughput, no stress", "particle-steps/s", med[b]["particle_steps_per_s"],
            pred[b]["particle_steps_per_s"])
        C[-1]["measured_fastest"] = max(r["particle_steps_per_s"] for r in runs[b])
    for reg in REGIMES:
        add(f"2 ranks (one per core), particles {reg}: total time", "s", *t(f"2rank-{reg}"))
    for reg in REGIMES:
        add(f"1 rank, particles {reg}: total time, second estimate (kernels measured here)", "s",
            med[f"1rank-{reg}"]["sim_time_s"], pred[f"1rank-{reg}-measured"]["sim_time_s"])
        add(f"2 ranks (one per core), particles {reg}: total time, second estimate", "s",
            med[f"2rank-{reg}"]["sim_time_s"], pred[f"2rank-{reg}-measured"]["sim_time_s"])
    if "2rank-NOW" in specs:
        now, rw = med["2rank-NOW"], med["2rank-RW"]
        pn, pw = pred["2rank-NOW"], pred["2rank-RW"]
        add("2 ranks (one on half a core), total time NOW", "s", now["sim_time_s"], pn["sim_time_s"])
        add("2 ranks (one on half a core), total time RW", "s", rw["sim_time_s"], pw["sim_time_s"])
        add("load ratio rank 1 / rank 0 under NOW", "x", load_of(now, 1) / load_of(now, 0), load_of(pn, 1) / load_of(pn, 0))
        gm = (now["sim_time_s"] - rw["sim_time_s"]) / now["sim_time_s"] * 100
        gp = (pn["sim_time_s"] - pw["sim_time_s"]) / pn["sim_time_s"] * 100
        add("gain of RW over NOW", "%", gm, gp, "points")
        add("lambda under NOW (max interval)", "%", now["lambda_max_percent"], pn["lambda_max_percent"], "points")
    for name in specs:  # the cores as they were around the median run
        if f"{name}-asrun" in pred:
            add(f"{LABELS[name]}: total time, cores as measured around the run", "s", med[name]["sim_time_s"],
                pred[f"{name}-asrun"]["sim_time_s"])
    for name in specs:  # the cores as the run's ranks saw them
        if f"{name}-inrun" in pred:
            add(f"{LABELS[name]}: total time, cores as measured in the run", "s", med[name]["sim_time_s"],
                pred[f"{name}-inrun"]["sim_time_s"])
            C[-1]["shares"] = {str(k): v for k, v in run_shares(med[name]).items()}
    for c in C:
        m, p = c["measured"], c["predicted"]
        c["error"] = (p - m) if c["error_kind"] == "points" else ((p - m) / m * 100 if m else None)
    return C


LABELS = {"1rank-contact": "1 rank, particles contact, no stress", "1rank-apart": "1 rank, particles apart, no stress",
          "1rank-contact-vm": "1 rank, particles contact, stress-ng --vm on the other core",
          "1rank-apart-vm": "1 rank, particles apart, stress-ng --vm on the other core",
          "2rank-contact": "2 ranks (one per core), particles contact",
          "2rank-apart": "2 ranks (one per core), particles apart",
          "2rank-NOW": "2 ranks (one on half a core), NOW", "2rank-RW": "2 ranks (one on half a core), RW"}


def _watch_cells(specs, runs, typical, key, digits):
    """One watch's times per group and run: 'name: CPU c before / after ms (share), ...; ... | ...'."""
    parts = []
    for name in specs:
        cells = [", ".join(f"CPU {c} {v[0] * 1e3:.{digits}f} / {v[1] * 1e3:.{digits}f} ms "
                           f"({core_shares(r, typical, key)[int(c)]:.2f})" for c, v in sorted(r.get(key, {}).items()))
                 for r in runs[name]]
        parts.append(f"{name}: " + "; ".join(cells))
    return " | ".join(parts)


def make_notes(a, ncpu, specs, runs, typical, pr):
    allruns = [r for v in runs.values() for r in v]
    loads = [s["_loadavg_before"] for s in allruns]
    notes = [
        f"Problem: {a.particles} particles, {a.steps} steps of 1e-8 s, repartition every {a.every} steps; median of "
        f"{a.repeats} native repeats kept (of the quiet ones: every core the run used at {QUIET_SHARE} of the "
        "typical core or more in the core watch; up to as many extra repeats where some were not); times are the time loop (summary sim_time_s: wall clock natively, "
        "simulated under SMPI).",
        f"Load average before the native runs: {min(loads):.2f} to {max(loads):.2f} on {ncpu} cores; CPU share of the "
        f"DEM processes: {min(r['_cpu_share'] for r in allruns):.2f} to {max(r['_cpu_share'] for r in allruns):.2f} "
        "(1.0: they had their cores to themselves). The median of the quiet repeats is kept.",
        "Native stress: `" + " ".join(VM) + "`; SMPI: a vm stress actor (1 worker, 1e9 B per activity) on local-1, "
        "sharing local-membus with the rank. Particles 'in contact' is the study's benchmark (diameter 1.001 x "
        "spacing); 'apart' (0.99) has no contact forces, so its kernels mostly stream particle data.",
    ]
    if pr.get("probe_again"):
        f, g = pr["probe_first"], pr["probe_again"]
        notes.append("The probe at the start / again after the native runs (the platform takes the larger of each): "
                     f"triad bus traffic, {ncpu} cores {f['bw_allcore'] / 1e9:.1f} / {g['bw_allcore'] / 1e9:.1f} GB/s, "
                     f"1 core {f['bw_1core'] / 1e9:.1f} / {g['bw_1core'] / 1e9:.1f} GB/s; missed gathers "
                     f"{f['gather_1core'] / 1e9:.2f} / {g['gather_1core'] / 1e9:.2f} GB/s; FP64 "
                     f"{f['flops_1core'] / 1e9:.1f} / {g['flops_1core'] / 1e9:.1f} GF/s; new memory "
                     f"{f['first_touch'] / 1e9:.2f} / {g['first_touch'] / 1e9:.2f} GB/s.")
    for name in specs:
        notes.append(spread(f"native, {LABELS[name]}", runs[name]))
    if typical:
        notes.append("Core watch: the contact-force kernel alone on each core a run uses, right before / after it "
                     f"(median of the check {typical * 1e3:.1f} ms; in brackets the core's share, median over mean, "
                     "at most 1): " + _watch_cells(specs, runs, typical, "_cores", 1) + ". 'cores as measured around "
                     "the run' predicts the median run on a platform giving each core that share of its rate and "
                     "bandwidth.")
    typical_mem = core_typical(runs, "_cores_mem")
    if typical_mem:
        notes.append("Memory watch: kick-drift (a streaming kernel, 262,144 particles apart) alone on each core, "
                     f"right before / after each run (median of the check {typical_mem * 1e3:.2f} ms; in brackets the "
                     "core's memory share, at most 1, which 'cores as measured around the run' also gives the core's "
                     "per-core bandwidth and gathers): " + _watch_cells(specs, runs, typical_mem, "_cores_mem", 2) + ".")
    if "2rank-NOW" in specs:
        if a.emulate_with == "throttle":
            th = [r["_throttle_share"] for n in ("2rank-NOW", "2rank-RW") for r in runs[n] if r.get("_throttle_share")]
            notes.append("Emulated heterogeneity: rank 1 (pinned to core 1) is stopped and continued every 10 ms "
                         "(SIGSTOP/SIGCONT, as cpulimit does), so it runs half the time"
                         + (f" (realised: {min(th):.2f} to {max(th):.2f})" if th else "") + "; rank 0 is pinned to "
                         "core 0. The model gives rank 1 local-1half (half the core rate, half the per-core bandwidth).")
        else:
            notes.append("Emulated heterogeneity: rank 1 shares core 1 with `" + " ".join(HOG) + "`; the model gives "
                         "it local-1half (half the core rate, half the per-core bandwidth).")
    return notes


def write_results(a, out, res, C):
    # keep every invocation's figures: on a shared machine their spread is part of the result
    hist_path = os.path.join(out, "hardware-history.json")
    history = []
    if os.path.exists(hist_path):
        with open(hist_path) as f:
            history = json.load(f)
    history.append(dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), loadavg=res.pop("_loads"),
                        particles=a.particles, steps=a.steps, repeats=a.repeats,
                        cpu=res["probe"].get("cpu", {}).get("text"),
                        kernel_flops_per_cycle=res["probe"].get("kernel_flops_per_cycle"),
                        comparisons=[{k: c[k] for k in ("what", "unit", "measured", "predicted")} for c in C]))
    with open(hist_path, "w") as f:
        json.dump(history, f, indent=1)
    res["history"] = history
    with open(os.path.join(out, "hardware.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "HARDWARE.md"), "w") as f:
        import report
        f.write("\n".join(report.hardware_section(res)) + "\n")
    for c in C:
        e = c["error"]
        print(f"  {c['what']}: measured {c['measured']:.4g} {c['unit']}, predicted {c['predicted']:.4g} "
              f"({'n/a' if e is None else ('%+.1f points' % e if c['error_kind'] == 'points' else '%+.1f %%' % e)})")
    print(f"hardware.py: {out}/hardware.json, HARDWARE.md ({res['wall_s']:.0f} s)")


def main():
    a = parse_args()
    out = a.out
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
    cmdline = " ".join(["validation/study/hardware.py"] + sys.argv[1:])
    pr, plat = probe_phase(a, out, ncpu)
    pr["partition_rate"] = partition_rate(a, out, plat, log)
    print(f"hardware.py: Zoltan RCB {pr['partition_rate'] / 1e6:.1f} M particle-levels/s per core "
          f"({1e9 / pr['partition_rate']:.0f} ns each, the whole call, in the solver's configuration)", flush=True)
    calibrated_platform(pr, plat, quota_period=half_period(a))
    if a.calibrate_only:
        with open(os.path.join(out, "calibration.json"), "w") as f:
            json.dump(pr, f, indent=1)
        return 0
    specs = run_specs(a.emulate)
    cfgs = {name: write_scenario(a, out, spec, plat) for name, spec in specs.items()}
    watch = CoreWatch(plat, a.calibrate_cost)
    runs = native_phase(a, specs, cfgs, out, log, watch)
    reprobe(a, pr, ncpu, plat, log)
    typical, typical_mem = core_typical(runs), core_typical(runs, "_cores_mem")
    med = {name: best_of(r, typical) for name, r in runs.items()}
    pred = predict_phase(a, pr, specs, cfgs, out, log, med, typical, typical_mem)
    C = comparisons(pr, specs, runs, med, pred)
    two = [n for n in specs if n.startswith("2rank-") and not specs[n].get("emulated")]
    core_seen = {n.split("-", 1)[1]: [dict(cpu0_s=sum(r["_cores"]["0"]) / 2, cpu1_s=sum(r["_cores"]["1"]) / 2,
                                           load_ratio=load_of(r, 1) / load_of(r, 0)) for r in runs[n] if r.get("_cores")]
                 for n in two}
    shares = {f"1 rank {reg}": [r["_cpu_share"] for r in runs[f"1rank-{reg}"] + runs[f"1rank-{reg}-vm"]]
              for reg in REGIMES}
    shares.update({f"2 ranks {n.split('-')[1]}": [r["_cpu_share"] for r in runs[n]]
                   for n in specs if specs[n].get("emulated")})
    loads = [s["_loadavg_before"] for v in runs.values() for s in v]
    res = dict(command=cmdline, probe=pr, platform=plat, comparisons=C, notes=make_notes(a, ncpu, specs, runs, typical, pr),
               cpu_share=shares, core_times=core_seen, core_typical_s=typical,
               core_watch={n: [r.get("_cores", {}) for r in v] for n, v in runs.items()}, core_typical_mem_s=typical_mem,
               core_watch_mem={n: [r.get("_cores_mem", {}) for r in v] for n, v in runs.items()},
               setup=f"Machine: {ncpu} cores; native build `{a.native}`, SMPI build `{a.demsim}`.",
               wall_s=time.time() - t_start, _loads=[min(loads), max(loads)])
    write_results(a, out, res, C)
    return 0


if __name__ == "__main__":
    sys.exit(main())
