#!/usr/bin/python3
"""CTest check of validation/study/hardware.py's core shares (no runs: synthetic summaries).

    tests/scripts/check_hardware.py

1. core_typical: the median of every core time of the check (before and after each run).
2. core_shares: the typical time over a core's mean time around a run, at most 1 (compute and
   memory watch apart).
3. run_shares: each rank's load per particle against the fastest rank's (1 for it); nothing for a
   run of one rank or without particles.
4. best_of: the median run by total time (the lower middle of an even count), of the quiet
   runs where the typical core time is given (quiet: every core at QUIET_SHARE or more).
5. calibrated_platform: with shares, a core's rate and per-core bandwidth scaled by its share,
   local-1half at half of core 1's (with the Throttle's quota_period: at core 1's rate with
   cpu_share 0.5 and that cpu_period); a memory share scales the per-core bandwidth alone; without
   shares, both cores equal; the core rate is the clock x make_platforms' constant, or x the one
   this invocation measured; the per-core bandwidth the lower of the triad's and kick-drift's
   streams' (core_bw_of), at most the node's; the container links at an MPI ping-pong's latency
   (two links a message: half each) and bandwidth, or make_platforms' estimate without one.
   keep_faster_kernel: of two kernel measurements the faster, its rate per cycle at the final
   clock (the platform's core rate is then that measured rate).
6. cpu_identity: the first processor of a cpuinfo file (name, family, model, widest vector ISA).
7. report.tolerance_line: counts the four plain total-time rows within +-15 % (the bound itself
   inside), no other rows; report.constant_here: the measured core-rate constant against the
   platforms', inside or outside the sensitivity step.
Exit status 0 when all hold, else 1 (each failure printed).
"""
import argparse
import os
import re
import sys
import tempfile

import checking

STUDY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "validation", "study")
sys.path.insert(0, STUDY)
import hardware as hw  # noqa: E402

check = checking.Checks("check_hardware.py")


def close(a, b, what, tol=1e-12):
    check(abs(a - b) <= tol * max(1.0, abs(b)), f"{what}: {a} != {b}")


def rank(r, load, n):
    return dict(rank=r, load_s=load, particles=n)


def check_shares():
    """1-4: core_typical, core_shares, run_shares, best_of."""
    groups = {"a": [{"_cores": {"0": [1.0, 3.0]}}], "b": [{"_cores": {"0": [2.0, 2.0], "1": [5.0, 1.5]}}]}
    close(hw.core_typical(groups), 2.0, "core_typical: median of 1, 1.5, 2, 2, 3, 5")
    check(hw.core_typical({"a": [{}]}) is None, "core_typical without watch times")
    sh = hw.core_shares(groups["b"][0], 2.0)
    close(sh[0], 1.0, "core_shares: a core at the typical time")
    close(sh[1], 2.0 / 3.25, "core_shares: a slowed core, typical / mean")
    close(hw.core_shares({"_cores": {"0": [1.0, 1.0]}}, 2.0)[0], 1.0, "core_shares: at most 1")
    check(hw.core_shares(groups["b"][0], None) == {}, "core_shares without a typical time")
    mem = {"a": [{"_cores_mem": {"0": [0.001, 0.001]}}], "b": [{"_cores_mem": {"0": [0.001, 0.003]}}]}
    close(hw.core_typical(mem, "_cores_mem"), 0.001, "core_typical of the memory watch")
    close(hw.core_shares(mem["b"][0], 0.001, "_cores_mem")[0], 0.5, "core_shares of the memory watch")
    check(hw.core_shares(mem["b"][0], 0.001) == {}, "core_shares: the compute watch ignores the memory watch's times")

    rs = hw.run_shares({"per_rank": [rank(0, 3.35, 250000), rank(1, 4.05, 250000)]})
    close(rs[0], 1.0, "run_shares: the faster rank")
    close(rs[1], 3.35 / 4.05, "run_shares: the slower rank")
    rs = hw.run_shares({"per_rank": [rank(0, 2.0, 100), rank(1, 3.0, 300)]})
    close(rs[0], 0.5, "run_shares: per particle (rank 0 twice as slow per particle)")
    close(rs[1], 1.0, "run_shares: per particle (rank 1 the faster)")
    check(hw.run_shares({"per_rank": [rank(0, 1.0, 10)]}) == {}, "run_shares: one rank")
    check(hw.run_shares({"per_rank": [rank(0, 1.0, 0), rank(1, 1.0, 10)]}) == {}, "run_shares: a rank without particles")

    runs = [{"sim_time_s": t} for t in (5.0, 3.0, 4.0, 9.0)]
    close(hw.best_of(runs)["sim_time_s"], 4.0, "best_of: lower middle of four")
    close(hw.best_of(runs[:3])["sim_time_s"], 4.0, "best_of: median of three")
    # quiet runs: every core at QUIET_SHARE of the typical core or more; the median of those
    calm, slow = {"0": [1.0, 1.0]}, {"0": [1.0, 1.5]}  # typical 1.0: shares 1.0 and 0.8
    check(hw.quiet({"_cores": calm}, 1.0) and not hw.quiet({"_cores": slow}, 1.0), "quiet: share 1.0 yes, 0.8 no")
    check(hw.quiet({"_cores": {"0": [1.0, 1.1]}}, 1.0), "quiet: share 1 / 1.05 = 0.952 >= 0.95")
    check(hw.quiet({}, 1.0) and hw.quiet({"_cores": slow}, None), "quiet: without a watch or a typical time")
    runs = [dict(sim_time_s=t, _cores=c) for t, c in ((9.0, slow), (5.0, calm), (3.0, calm), (8.0, slow), (4.0, calm))]
    close(hw.best_of(runs, 1.0)["sim_time_s"], 4.0, "best_of: the median of the quiet runs (3, 4, 5)")
    close(hw.best_of(runs)["sim_time_s"], 5.0, "best_of: without a typical time, the median of all")
    close(hw.best_of(runs[:1] + runs[3:4], 1.0)["sim_time_s"], 8.0, "best_of: none quiet, the median of all")


def check_platform():
    """5-6: the clock and lanes from the probe, the calibrated platform, the processor record."""
    pr = dict(bw_allcore=100e9, bw_1core=50e9, flops_1core=110e9, scalar_1core=13.75e9, lanes=8, threads_all=2,
              gather_1core=7e9, divider_1core=4e9, first_touch=0.4e9)
    # the clock from the scalar FMA loop (2 units x 2 flop a cycle), the lanes from the two loops
    clock, lanes = hw.clock_and_lanes(pr)
    close(clock, 13.75e9 / 4, "clock_and_lanes: scalar loop / 4")
    close(lanes, 8.0, "clock_and_lanes: vector loop / scalar loop")
    check(hw.clock_and_lanes(dict(pr, scalar_1core=None)) == (110e9 / 32, None),
          "clock_and_lanes: without the scalar loop, peak / (4 x register lanes) and no lanes")
    # the C reference's pair pass over the kernel's, where measured, is the lanes; the loops bound it
    close(hw.clock_and_lanes(dict(pr, scalar_over_lanes=2.6))[1], 2.6, "clock_and_lanes: the reference ratio")
    close(hw.clock_and_lanes(dict(pr, scalar_over_lanes=2.6))[0], 13.75e9 / 4, "clock_and_lanes: clock unchanged")
    close(hw.clock_and_lanes(dict(pr, scalar_over_lanes=12.0))[1], 8.0, "clock_and_lanes: at most the FMA loops' ratio")
    close(hw.clock_and_lanes(dict(pr, scalar_over_lanes=0.7))[1], 1.0, "clock_and_lanes: at least one lane")
    with tempfile.TemporaryDirectory() as d:
        path = hw.calibrated_platform(pr, os.path.join(d, "p.xml"), {0: 1.0, 1: 0.8}, "test shares")
        xml = open(path).read()
        speed = {h: float(v) for h, v in re.findall(r'<host id="(local-[01]|local-1half)" speed="([0-9.e+-]+)f"', xml)}
        check(len(speed) == 3, f"calibrated_platform: hosts local-0, local-1, local-1half ({sorted(speed)})")
        if len(speed) == 3:
            close(speed["local-1"] / speed["local-0"], 0.8, "calibrated_platform: core 1 at its share", 1e-5)
            close(speed["local-1half"] / speed["local-0"], 0.4, "calibrated_platform: local-1half at half of core 1", 1e-5)
        lanes_props = [float(v) for v in re.findall(r'<prop id="simd_lanes" value="([0-9.e+-]+)"', xml)]
        check(lanes_props and all(abs(v - 8.0) < 1e-6 for v in lanes_props),
              f"calibrated_platform: simd_lanes 8 on every host ({lanes_props})")
        bws = [float(v) for v in re.findall(r'<prop id="core_bw" value="([0-9.e+-]+)"', xml)]
        close(bws[1] / bws[0], 0.8, "calibrated_platform: core 1's per-core bandwidth at its share", 1e-5)
        # with the Throttle's period: local-1half is core 1 at its whole rate, stopped half of each period
        xml_q = open(hw.calibrated_platform(pr, os.path.join(d, "q.xml"), {0: 1.0, 1: 0.8}, "test shares",
                                            quota_period=hw.THROTTLE_PERIOD)).read()
        speed_q = {h: float(v) for h, v in re.findall(r'<host id="(local-[01]|local-1half)" speed="([0-9.e+-]+)f"', xml_q)}
        half = xml_q[xml_q.index('<host id="local-1half"'):]
        half = half[:half.index("</host>")]
        check(len(speed_q) == 3 and abs(speed_q["local-1half"] / speed_q["local-1"] - 1) < 1e-9
              and '<prop id="cpu_share" value="0.5"/>' in half
              and f'<prop id="cpu_period" value="{hw.THROTTLE_PERIOD:g}"/>' in half,
              f"calibrated_platform with quota_period: local-1half at core 1's rate, cpu_share 0.5, cpu_period ({speed_q})")
        check(hw.half_period(argparse.Namespace(emulate_with="hog")) is None
              and hw.half_period(argparse.Namespace(emulate_with="throttle")) == hw.THROTTLE_PERIOD,
              "half_period: the Throttle's period with the throttle, none with the hog")
        xml = open(hw.calibrated_platform(dict(pr, scalar_over_lanes=2.6), os.path.join(d, "r.xml"))).read()
        lanes_props = [float(v) for v in re.findall(r'<prop id="simd_lanes" value="([0-9.e+-]+)"', xml)]
        check(lanes_props and all(abs(v - 2.6) < 1e-6 for v in lanes_props),
              f"calibrated_platform: simd_lanes from the reference ratio on every host ({lanes_props})")
        path = hw.calibrated_platform(pr, os.path.join(d, "m.xml"), {0: 1.0, 1: 0.8}, "test", {0: 0.5})
        xml = open(path).read()
        speed = dict(re.findall(r'<host id="(local-[01])" speed="([0-9.e+-]+)f"', xml))
        bws = [float(v) for v in re.findall(r'<prop id="core_bw" value="([0-9.e+-]+)"', xml)]
        check(speed.get("local-0") is not None and float(speed["local-0"]) / float(speed["local-1"]) > 1.2,
              "calibrated_platform: a memory share leaves the core's rate alone")
        close(bws[0] / bws[1], 0.5 / 0.8, "calibrated_platform: core 0's per-core bandwidth at its memory share", 1e-5)
        path = hw.calibrated_platform(pr, os.path.join(d, "q.xml"))
        speed = dict(re.findall(r'<host id="(local-[01])" speed="([0-9.e+-]+)f"', open(path).read()))
        check(speed.get("local-0") == speed.get("local-1"), "calibrated_platform without shares: equal cores")
        k0 = __import__("make_platforms").KERNEL_FLOPS_PER_CYCLE
        close(float(speed["local-0"]), 110e9 / 32 * k0, "calibrated_platform: clock x make_platforms' constant", 1e-5)
        path = hw.calibrated_platform(dict(pr, stream_1core=30e9, kernel_flops_per_cycle=2.0), os.path.join(d, "s.xml"))
        xml = open(path).read()
        speed = dict(re.findall(r'<host id="(local-[01])" speed="([0-9.e+-]+)f"', xml))
        bws = [float(v) for v in re.findall(r'<prop id="core_bw" value="([0-9.e+-]+)"', xml)]
        close(float(speed["local-0"]), 110e9 / 32 * 2.0, "calibrated_platform: clock x the constant measured here", 1e-5)
        close(bws[0], 30e9, "calibrated_platform: per-core bandwidth, kick-drift's streams below the triad", 1e-5)
        close(hw.core_bw_of(dict(pr, stream_1core=60e9)), 50e9, "core_bw_of: the triad below the streams")
        close(hw.core_bw_of(dict(pr, bw_1core=120e9)), 100e9, "core_bw_of: at most the node's")
        close(hw.node_bw_of(pr), 100e9, "node_bw_of: the triad's without the streams figure")
        close(hw.node_bw_of(dict(pr, stream_allcore=130e9)), 130e9, "node_bw_of: the streams' when above the triad's")
        close(hw.node_bw_of(dict(pr, stream_allcore=70e9)), 100e9, "node_bw_of: the triad's when above the streams'")
        path = hw.calibrated_platform(dict(pr, stream_allcore=130e9), os.path.join(d, "n.xml"))
        bus = re.findall(r'<host id="local-membus" speed="([0-9.e+-]+)f"', open(path).read())
        check(bus and abs(float(bus[0]) / 130e9 - 1) < 1e-5, f"calibrated_platform: the bus at node_bw_of ({bus})")
        slow_clock = dict(kernel_rate=10.9e9, clock_hz=3.19e9, kernel_flops_per_cycle=10.9 / 3.19, scalar_over_lanes=2.1)
        keep = dict(slow_clock)
        hw.keep_faster_kernel(keep, dict(kernel_rate=11.3e9, clock_hz=3.47e9, kernel_flops_per_cycle=11.3 / 3.47),
                              dict(scalar_over_lanes=2.6), 3.47e9)
        close(keep["clock_hz"] * keep["kernel_flops_per_cycle"], 11.3e9, "keep_faster_kernel: the faster kernel's rate")
        close(keep["scalar_over_lanes"], 2.6, "keep_faster_kernel: the faster probe's reference ratio")
        keep = dict(slow_clock, kernel_rate=11.5e9)
        hw.keep_faster_kernel(keep, dict(kernel_rate=11.3e9), dict(scalar_over_lanes=2.6), 3.47e9)
        close(keep["clock_hz"] * keep["kernel_flops_per_cycle"], 11.5e9,
              "keep_faster_kernel: the first kernel's rate at the final clock, not its rate per cycle of a slow clock")
        close(keep["scalar_over_lanes"], 2.1, "keep_faster_kernel: the first probe's reference ratio kept with it")
        veth = r'<link id="local-0-veth" bandwidth="([0-9.e+-]+)Bps" latency="([0-9.e+-]+)s"'
        pair = dict(same_node=True, latency_s=4e-7, bandwidth_Bps=8e9)
        links = re.findall(veth, open(hw.calibrated_platform(dict(pr, pairs=[pair]), os.path.join(d, "v.xml"))).read())
        check(links and abs(float(links[0][0]) / 8e9 - 1) < 1e-5 and abs(float(links[0][1]) / 2e-7 - 1) < 1e-5,
              f"calibrated_platform: a ping-pong of 0.4 us one way, 8 GB/s gives links of 8 GB/s, 0.2 us ({links})")
        check(not re.findall(veth, open(path).read()) and 'bandwidth="2.5GBps" latency="10us"' in open(path).read(),
              "calibrated_platform without a ping-pong: the links keep make_platforms' estimate")
        cpuinfo = os.path.join(d, "cpuinfo")
        with open(cpuinfo, "w") as f:
            f.write("processor\t: 0\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n"
                    "flags\t\t: fpu sse2 avx avx2 avx512f\n\nprocessor\t: 1\nmodel name\t: other\n")
        cpu = hw.cpu_identity(cpuinfo)
        check(cpu.get("text") == "AMD EPYC, family 25 model 17, AVX-512",
              f"cpu_identity: the first processor's name, family, model and widest vector ISA ({cpu})")
        check(hw.cpu_identity(os.path.join(d, "absent")) == {}, "cpu_identity: no cpuinfo, nothing")


def check_report():
    """7: report.tolerance_line and report.constant_here."""
    import report  # noqa: E402
    rows = [dict(what="1 rank, particles contact: total time, no stress", error=-12.5),
            dict(what="1 rank, particles apart: total time, no stress", error=-15.01),
            dict(what="2 ranks (one per core), particles contact: total time", error=15.0),
            dict(what="2 ranks (one per core), particles apart: total time", error=None),
            dict(what="2 ranks (one on half a core), total time NOW", error=1.0)]
    line = report.tolerance_line(rows)
    check(bool(line) and " 2 of 3 (" in line[0],
          f"tolerance_line: -12.5 and +15.0 inside, -15.01 outside, no error and other rows not counted ({line})")
    check(report.tolerance_line(rows[3:]) == [], "tolerance_line: no total-time row with an error, no line")
    k0 = __import__("make_platforms").KERNEL_FLOPS_PER_CYCLE
    near = report.constant_here({"probe": {"kernel_flops_per_cycle": 0.9 * k0}}, 0.2)
    far = report.constant_here({"probe": {"kernel_flops_per_cycle": 0.75 * k0, "cpu": {"text": "X"}}}, 0.2)
    check(bool(near) and "-10 %" in near[0] and "inside" in near[0], f"constant_here: 0.9 x the constant ({near})")
    check(bool(far) and "-25 %" in far[0] and "outside" in far[0] and "(X)" in far[0],
          f"constant_here: 0.75 x the constant, the processor named ({far})")
    check(report.constant_here({}, 0.2) == [], "constant_here: no measurement, no line")


def main():
    check_shares()
    check_platform()
    check_report()
    return checking.tally("check_hardware.py", check.failures, "all checks passed")


if __name__ == "__main__":
    sys.exit(main())
