#!/usr/bin/python3
"""Test (CTest validation_compare_real, native build): validation/study/compare_real.py end to end on this
machine as a cluster of two emulated containers.

Two containers of one core each (c0 on core 0, c1 on core 1) and a memory-stress neighbour s1
sharing c1's core, mapped to localhost: `demsim probe --quick` measures this machine, the platform
is written from it with the map's containers, the scenario runs natively (ranks bound to their
cores, the stress started through mpirun) and under SMPI on the probed platform, NOW and RW, and
the report gives predicted against measured, the platform's core rate from the contact-force
kernel sampled before the round of native runs with the probe's (probe-interleaved.json). Checked: the report's rows (both policies, total
time and per-rank load, finite errors, predicted within a factor of 5 of measured), the native
ranks on their cores, the platform's containers, the figure; and that a map whose two rank
containers share a core stops compare_real.py with exit status 2 naming the entry.

    check_compare_real.py --native build/native/demsim --smpi build/smpi/demsim --out DIR
Exit 77 (skipped) when the SMPI build is missing: the comparison needs both builds.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

SCENARIO = """name = "emulated-pair";
description = "two 1-core containers on this machine, a memory-stress neighbour on c1's core";
problem = {{ box = 1.0; fill = 0.5; particles = 20000; diameter_ratio = 1.001; }};
material = {{ youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; density = 2500.0; }};
time = {{ dt = 1.0e-8; steps = 60; }};
run = {{ ranks = 2; policy = "NOW"; repartition_every = 20; }};
platform = {{ file = "{platform}"; hosts = ["c0", "c1"]; }};
stress = ( {{ host = "s1"; kind = "vm"; workers = 1; bytes = 6.4e7; }} );
output = {{ dir = "{out}"; metrics_every = 10; }};
"""

MAP = """hostmap = (
  { container = "c0"; host = "localhost"; cores = "0"; },
  { container = "c1"; host = "localhost"; cores = "1"; },
  { container = "s1"; host = "localhost"; cores = "1"; }
);
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--native", required=True)
    ap.add_argument("--smpi", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not os.access(a.smpi, os.X_OK):
        print(f"skipped: no SMPI build at {a.smpi} (compare_real.py needs both builds)")
        return 77
    os.makedirs(a.out, exist_ok=True)
    scen = os.path.join(a.out, "pair.cfg")
    with open(scen, "w") as f:  # the SMPI runs replace platform.file with the probed platform
        f.write(SCENARIO.format(platform=os.path.join(TOP, "platforms", "local.xml"),
                                out=os.path.join(a.out, "x")))
    hostmap = os.path.join(a.out, "map.cfg")
    with open(hostmap, "w") as f:
        f.write(MAP)
    check = checking.Checks()

    out = os.path.join(a.out, "report")
    cmd = ["/usr/bin/python3", os.path.join(TOP, "validation", "study", "compare_real.py"), scen, "--hostmap", hostmap, "--out", out,
           "--quick", "--repeats", "1", "--sim-repeats", "2", "--native", a.native, "--smpi", a.smpi]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout[-4000:])
    check(p.returncode == 0, f"compare_real.py exit {p.returncode}")
    if p.returncode == 0:
        rep = json.load(open(os.path.join(out, "compare_real.json")))
        rows = rep["rows"]
        for pol in ("NOW", "RW"):
            tot = [r for r in rows if r["policy"] == pol and r["what"] == "total time (s)"]
            check(len(tot) == 1, f"{pol}: one total-time row")
            for r in tot + [r for r in rows if r["policy"] == pol and r["what"].startswith("load of rank")]:
                check(r["measured"] > 0 and r["predicted"] > 0 and math.isfinite(r["error_percent"]),
                      f"{pol} {r['what']}: measured {r['measured']} predicted {r['predicted']}")
                check(0.2 < r["predicted"] / r["measured"] < 5, f"{pol} {r['what']}: predicted/measured "
                      f"{r['predicted'] / r['measured']:.2f} outside [0.2, 5]")
        check(any(r["what"] == "gain of RW over NOW (%)" for r in rows), "gain row")
        s = json.load(open(os.path.join(out, "native", "NOW-1", "summary.json")))
        check([r.get("cpus") for r in s["per_rank"]] == ["0", "1"], f"native ranks' cpus {[r.get('cpus') for r in s['per_rank']]}")
        hosts = {h.get("id"): h.get("core") for h in ET.parse(os.path.join(out, "platform.xml")).getroot().iter("host")}
        check(hosts.get("c0") == "1" and hosts.get("c1") == "1" and "s1" in hosts, f"platform containers {hosts}")
        check(os.path.getsize(os.path.join(out, "compare_real.png")) > 10000, "figure")
        check("| total time (s) | NOW |" in open(os.path.join(out, "COMPARE.md")).read(), "COMPARE.md table")
        # the kernel sampled before the round, and the platform's rate from the median with the probe's
        pi = os.path.join(out, "probe-interleaved.json")
        k = json.load(open(pi))["nodes"][0]["contact_kernel_1core"] if os.path.isfile(pi) else {}
        check(len(k.get("interleaved_s", [])) == 1 and 0 < k["interleaved_s"][0] < 10, f"interleaved samples {k}")
        check("samples taken before each round" in open(os.path.join(out, "COMPARE.md")).read(), "COMPARE.md core rate")
        # two SMPI runs a policy (noise seeds 0 and 1); --resume makes no run again and keeps the date
        check(os.path.isfile(os.path.join(out, "smpi", "RW-seed1", "summary.json")), "the second SMPI run")
        native = os.path.join(out, "native", "NOW-1", "summary.json")
        before = (os.path.getmtime(native), rep.get("measured_from"))
        p = subprocess.run(cmd + ["--resume"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        again = json.load(open(os.path.join(out, "compare_real.json")))
        check(p.returncode == 0 and (os.path.getmtime(native), again.get("measured_from")) == before and before[1],
              f"--resume: exit {p.returncode}, native run and its date {before} -> "
              f"{(os.path.getmtime(native), again.get('measured_from'))}: {p.stdout[-800:]}")
    bad = os.path.join(a.out, "bad-map.cfg")
    with open(bad, "w") as f:
        f.write(MAP.replace('container = "c1"; host = "localhost"; cores = "1"', 'container = "c1"; host = "localhost"; cores = "0"'))
    p = subprocess.run(cmd[:3] + ["--hostmap", bad, "--out", os.path.join(a.out, "bad")] + cmd[7:],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 2 and "c1" in p.stdout, f"overlapping rank containers: exit {p.returncode}: {p.stdout[-800:]}")
    return checking.verdict("check_compare_real", check.failures)


if __name__ == "__main__":
    sys.exit(main())
