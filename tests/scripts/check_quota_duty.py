#!/usr/bin/python3
"""Test (CTest validation_quota_duty, native build, root): validation/study/quota_duty.py, the
measurement behind the model of a CPU quota. Bad input exits 2; without root or cgroup v1's cpu
controller the script exits 77 and so does this test (skipped). As root, a short run (0.4 s at a
20 ms period, share 0.5, one repeat, without and with a real-time waker every 1 ms): DUTY.md and
duty.json are written, a row for each, the process ran at most 0.6 of the time in each (the
kernel enforces the quota whatever else runs; a busy machine can only lower it), it was throttled
at least 10 times (0.4 s holds 20 periods), the runs' ends are set against the kernel's tick where
its CONFIG_HZ is readable, and no cgroup or waker of the run is left behind.

    check_quota_duty.py --demsim (unused) --out DIR
"""
import glob
import json
import os
import subprocess
import sys

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "validation", "study", "quota_duty.py")


def main():
    a = checking.args(__doc__)
    check = checking.Checks()
    for bad in (["--share", "1.5"], ["--periods", "0"], ["--repeats", "0"], ["--wakers", "-1"]):
        p = subprocess.run([sys.executable, TOOL, "--out", a.out] + bad, capture_output=True, text=True)
        check(p.returncode == 2 and "expected" in p.stderr, f"quota_duty.py {' '.join(bad)}: exit {p.returncode}")
    p = subprocess.run([sys.executable, TOOL, "--periods", "0.02", "--seconds", "0.4", "--repeats", "1",
                        "--wakers", "0", "0.001", "--out", a.out], capture_output=True, text=True, timeout=60)
    if p.returncode == 77:
        print("check_quota_duty: skipped (" + p.stdout.strip() + ")")
        return 77
    check(p.returncode == 0, f"quota_duty.py: exit {p.returncode}: {p.stdout[-1000:]}{p.stderr[-1000:]}")
    if p.returncode == 0:
        d = json.load(open(os.path.join(a.out, "duty.json")))
        check(os.path.isfile(os.path.join(a.out, "DUTY.md")), "DUTY.md written")
        check(sorted(r["waker_s"] for r in d["rows"]) == [0.0, 0.001], f"rows: {[r['waker_s'] for r in d['rows']]}")
        for row in d["rows"]:
            w = f"waker {row['waker_s']} s: "
            check(row["ran"] and max(row["ran"]) <= 0.6, f"{w}ran {row['ran']} of the time under a quota of 0.5")
            check(row["windows"] >= 10, f"{w}throttled {row['windows']} times in 0.4 s of 20 ms periods")
            check(row["tick_s"] is None or all(x is not None and 0.0 <= x <= 1.0 for x in row["ends_on_tick"]),
                  f"{w}the runs' ends against the kernel's tick: {row.get('tick_s')} s, {row.get('ends_on_tick')}")
    left = subprocess.run(["pgrep", "-f", "study/quota_duty.py"], capture_output=True, text=True).stdout.split()
    check(not left, f"a process of the run left behind: {left}")
    check(not glob.glob("/sys/fs/cgroup/cpu/dsquota*"), "a cgroup of the run left behind")
    return checking.verdict("check_quota_duty", check.failures)


if __name__ == "__main__":
    sys.exit(main())
