#!/usr/bin/python3
"""When does a container with a CPU quota run? The measurement behind the model of cpu_share
(sim/quota.h: a CFS quota is a duty cycle fixed in wall-clock time, running in the first
share x period of every period, when the container's rank is always runnable, as a rank of Open
MPI polling for its messages is).

    validation/study/quota_duty.py [--periods 0.01 0.1] [--share 0.5] [--seconds 2] [--repeats 3]
                                   [--wakers 0 0.0005] [--out DIR]

As root (cgroup v1, as the emulator's containers): for each period P and repeat, a cpu cgroup with
cpu.cfs_period_us = P and cpu.cfs_quota_us = share x P, and in it one process pinned to core 1
that reads the monotonic clock in a loop for --seconds; a gap between two reads longer than
0.3 ms is a time it did not run (throttled). Reports, per period: the part of the time it ran
(the model: share), and the lengths of its runs and of its gaps, min, median and max (the model:
share x P and (1 - share) x P, every period alike). The periods are interleaved over the repeats.
--wakers W: each period also with a real-time task (SCHED_FIFO) on the same core, outside the
quota, woken every W seconds (0: none), as the emulator's demsim-wire is woken on a container's
core by each packet the container sends: each wake-up is a scheduling point at which the kernel
charges the spinner's run-time and throttles it if its quota is spent, before the next tick.
DIR/DUTY.md and DIR/duty.json. The cgroups are removed on every exit path. Exit status 77 when
not root or without cgroup v1's cpu controller (nothing to measure), 2 on bad input.
"""
import argparse
import cmath
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "platforms"))
import make_platforms  # noqa: E402

CPU_ROOT = "/sys/fs/cgroup/cpu"
GAP_NS = 300_000


def spin(cg, seconds, w):
    """The child: into cgroup cg on core 1, reads the clock for `seconds`, writes its gaps to w."""
    os.sched_setaffinity(0, {1 if os.cpu_count() > 1 else 0})
    with open(os.path.join(cg, "tasks"), "w") as f:
        f.write(str(os.getpid()))
    gaps = []
    t0 = last = time.monotonic_ns()
    end = t0 + int(seconds * 1e9)
    while last < end:
        t = time.monotonic_ns()
        if t - last > GAP_NS:
            gaps.append((last - t0, t - last))
        last = t
    os.write(w, json.dumps(gaps).encode())
    os._exit(0)


def wake(every):
    """The waker: on core 1 at real-time priority, outside the quota, asleep but every `every` s,
    until killed."""
    os.sched_setaffinity(0, {1 if os.cpu_count() > 1 else 0})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    while True:
        time.sleep(every)


def measure(period, share, seconds, waker=0.0):
    """{ran, on_ms: [...], off_ms: [...]} of one spinning process under a quota of share x period
    (with a real-time waker on its core every `waker` s, when > 0)."""
    cg = os.path.join(CPU_ROOT, f"dsquota{os.getpid()}")
    os.mkdir(cg)
    wpid = 0
    try:
        if waker > 0:
            wpid = os.fork()
            if wpid == 0:
                try:
                    wake(waker)
                finally:
                    os._exit(0)
        for name, us in (("cpu.cfs_period_us", period * 1e6), ("cpu.cfs_quota_us", share * period * 1e6)):
            with open(os.path.join(cg, name), "w") as f:
                f.write(str(int(round(us))))
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            spin(cg, seconds, w)
        os.close(w)
        data = b""
        while chunk := os.read(r, 1 << 20):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
    finally:
        if wpid:
            os.kill(wpid, 9)
            os.waitpid(wpid, 0)
        os.rmdir(cg)
    gaps = json.loads(data)
    on = [gaps[i + 1][0] - gaps[i][0] - gaps[i][1] for i in range(len(gaps) - 1)]
    return {"ran": 1.0 - sum(g[1] for g in gaps) / (seconds * 1e9),
            "on_ms": [x / 1e6 for x in on], "off_ms": [g[1] / 1e6 for g in gaps],
            "end_ms": [g[0] / 1e6 for g in gaps]}


def on_the_tick(ends_ms, tick_s):
    """How closely the runs' ends keep to one phase of the kernel's tick grid: the length of the
    mean of exp(2 pi i end / tick) over the ends (1: every end at the same point of the tick, as
    when the kernel throttles at its tick; near 0: ends anywhere, as at the quota's own moment)."""
    if not ends_ms or not tick_s:
        return None
    z = sum(cmath.exp(2j * math.pi * (e / 1e3) / tick_s) for e in ends_ms) / len(ends_ms)
    return abs(z)


def spread(v):
    return [min(v), statistics.median(v), max(v)] if v else [None] * 3


def report(args, runs, out):
    rows = []
    for p, wk in ((p, wk) for p in args.periods for wk in args.wakers):
        mine = [r for r in runs if r["period"] == p and r["waker"] == wk]
        on = [x for r in mine for x in r["on_ms"]]
        off = [x for r in mine for x in r["off_ms"]]
        tick = make_platforms.kernel_tick()
        # each repeat's process has its own time origin: the tick's phase is taken within a repeat
        grid = [on_the_tick(r.get("end_ms", []), tick) for r in mine]
        rows.append({"period_s": p, "waker_s": wk, "share": args.share, "tick_s": tick, "ends_on_tick": grid,
                     "beyond_quota_ms": spread([x - args.share * p * 1e3 for x in on if x < p * 1e3]),
                     "ran": [r["ran"] for r in mine], "on_ms": spread(on),
                     "off_ms": spread(off), "model_on_ms": args.share * p * 1e3,
                     "model_off_ms": (1 - args.share) * p * 1e3, "windows": len(off)})
    with open(os.path.join(out, "duty.json"), "w") as f:
        json.dump({"command": " ".join(sys.argv), "kernel": os.uname().release, "rows": rows,
                   "runs": runs}, f, indent=1)
    fmt = lambda v: " / ".join(f"{x:.2f}" for x in v)  # noqa: E731
    lines = ["# When a container with a CPU quota runs", "",
             f"Command: `{' '.join(sys.argv)}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"kernel {os.uname().release}).", "",
             "One process pinned to a core reads the clock in a loop inside a cgroup v1 with the quota; a gap "
             f"over {GAP_NS / 1e6:g} ms is a throttled time. The model without a tick (sim/quota.h): it runs "
             "share x period, then stops for the rest, every period. With the kernel's tick (platform property "
             "cpu_tick, 1/CONFIG_HZ): it is throttled at the first tick after its quota is spent and owes the "
             "excess to the next period, so its runs end on the tick grid. 'Ends on the tick': the length of the "
             "mean of exp(2 pi i end / tick) over the runs' ends, each repeat (1: every end at one point of the "
             "tick; near 0: anywhere). 'Waker': a real-time task on the same core woken that often (none: "
             "-); 'beyond the quota': each run less share x period (the runs shorter than a period).", "",
             "| period | waker | share | part of the time it ran (each repeat) | runs, ms: min / median / max "
             "(model without a tick) | beyond the quota, ms: min / median / max | throttled, ms: min / median / "
             "max (model without a tick) | periods | tick | ends on the tick |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        grid = (f"{r['tick_s'] * 1e3:g} ms | " + ", ".join("-" if x is None else f"{x:.2f}" for x in r["ends_on_tick"])
                if r["tick_s"] else "unknown | ")
        waker = f"{r['waker_s'] * 1e3:g} ms" if r["waker_s"] else "-"
        lines.append(f"| {r['period_s'] * 1e3:g} ms | {waker} | {r['share']:g} | "
                     f"{', '.join(f'{x:.3f}' for x in r['ran'])} | {fmt(r['on_ms'])} ({r['model_on_ms']:g}) "
                     f"| {fmt(r['beyond_quota_ms'])} | {fmt(r['off_ms'])} ({r['model_off_ms']:g}) "
                     f"| {r['windows']} | {grid} |")
    with open(os.path.join(out, "DUTY.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--periods", type=float, nargs="+", default=[0.01, 0.1], help="quota periods, s")
    ap.add_argument("--share", type=float, default=0.5, help="the part of the period it may run (0 < S < 1)")
    ap.add_argument("--seconds", type=float, default=2.0, help="how long each process spins")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wakers", type=float, nargs="+", default=[0.0],
                    help="a real-time waker on the spinner's core every W s (0: none), each period with each")
    ap.add_argument("--out", default="out/quota")
    args = ap.parse_args()
    if not 0 < args.share < 1 or any(not 0.001 <= p <= 1 for p in args.periods) or args.seconds <= 0 \
            or args.repeats < 1 or any(not 0 <= w <= 1 for w in args.wakers):
        sys.stderr.write("quota_duty.py: expected 0 < --share < 1, periods in [0.001, 1] s, --seconds > 0, "
                         "--repeats >= 1, wakers in [0, 1] s\n")
        return 2
    if os.geteuid() != 0 or not os.path.isfile(os.path.join(CPU_ROOT, "cpu.cfs_period_us")):
        print("quota_duty.py: needs root and cgroup v1's cpu controller at " + CPU_ROOT + "; skipped")
        return 77
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for i in range(args.repeats):
        for p in args.periods:
            for wk in args.wakers:
                r = measure(p, args.share, args.seconds, wk)
                r.update(period=p, waker=wk, repeat=i + 1)
                runs.append(r)
                print(f"period {p * 1e3:g} ms, waker {wk * 1e3:g} ms, repeat {i + 1}: ran {r['ran']:.3f}", flush=True)
    report(args, runs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
