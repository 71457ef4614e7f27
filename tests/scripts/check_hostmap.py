#!/usr/bin/python3
"""Host map check (native build): a 2-rank run placed by a host map lands on the map's cores,
its declared stress runs while the ranks do and is gone afterwards, and the dry run prints the
placement.

  tests/scripts/check_hostmap.py --demsim build/native/demsim --out DIR

Two 1-core containers c0 (core 0) and c1 (core 1) on localhost, and a vm stress neighbour s1
on core 1 (scenarios/emulated/hostmap-local.cfg), running scenarios/bench-contact.cfg at 20,000
particles for 40 steps. Exits 1 naming what did not hold."""
import json
import os
import subprocess
import sys
import time

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def stress_running():
    return subprocess.run(["pgrep", "-f", "stress-ng"], stdout=subprocess.DEVNULL).returncode == 0


def main():
    a = checking.args(__doc__)
    hostmap = os.path.join(SOURCE, "scenarios", "emulated", "hostmap-local.cfg")
    scenario = os.path.join(a.out, "hostmap.cfg")
    with open(os.path.join(SOURCE, "scenarios", "bench-contact.cfg")) as f:
        text = f.read()
    # bench-contact's hosts and ranks replaced: two containers and a stress neighbour
    text = text.replace('hosts = ["local"]', 'hosts = ["c0", "c1"]').replace("ranks = 1;", "ranks = 2;")
    text += 'stress = ( { host = "s1"; kind = "vm"; workers = 1; bytes = 64e6; start = 0.0; } );\n'
    with open(scenario, "w") as f:
        f.write(text)
    run_dir = os.path.join(a.out, "run")
    cmd = [a.demsim, "run", scenario, "--quiet", "--particles", "20000", "--steps", "40", "--out", run_dir,
           "--set", "native.hostmap=" + hostmap]
    failures = []
    if stress_running():
        failures.append("a stress-ng process was already running before the run (cannot tell ours apart)")

    dry = subprocess.run(cmd + ["--dry-run"], capture_output=True, text=True)
    for line in ("rank 0=localhost slot=0", "rank 1=localhost slot=1", "localhost slots=2",
                 "--rankfile", "taskset -c 1"):
        if line not in dry.stdout:
            failures.append(f"dry run: '{line}' missing from the output:\n{dry.stdout}{dry.stderr}")
    if "note:" not in dry.stderr:
        failures.append(f"dry run: no note on the stress sharing c1's core:\n{dry.stderr}")

    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = False
    while proc.poll() is None:
        seen = seen or stress_running()
        time.sleep(0.2)
    out = proc.stdout.read()
    wall = time.time() - t0
    time.sleep(1.0)
    if proc.returncode != 0:
        failures.append(f"run: exit {proc.returncode}:\n{out}")
    if not seen:
        failures.append(f"run: no stress-ng process seen while the ranks ran; the run said:\n{out[-3000:]}")
    if stress_running():
        failures.append("run: a stress-ng process is left after the run")
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            per = {r["rank"]: r for r in json.load(f)["per_rank"]}
        for rank, cpus in ((0, "0"), (1, "1")):
            if per[rank].get("cpus") != cpus:
                failures.append(f"rank {rank}: cpus {per[rank].get('cpus')!r}, expected {cpus!r}")
            if not per[rank].get("processor"):
                failures.append(f"rank {rank}: no processor name in summary.json")
        for name in ("hostfile", "rankfile"):
            if not os.path.exists(os.path.join(run_dir, name)):
                failures.append(f"run: {name} not written in {run_dir}")
    except (OSError, KeyError, ValueError) as e:
        failures.append(f"summary.json: {e}")
    for f in failures:
        print("FAIL:", f)
    print(f"host map check: {'FAILED' if failures else 'passed'} (run {wall:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
