#!/usr/bin/python3
"""The noise model end to end (SMPI build): case 1 at a small size, four containers, RW. case1.cfg
runs with noise by default (scenarios/make_scenarios.py, NOISE); with noise.enabled = false it is
the deterministic model bit for bit (the same summary, but the wall-clock fields, as case1.cfg
without its noise line). With noise.enabled = true and every cv = 0 the run is the noiseless one
bit for bit (sim_time_s and the kinetic energy); with noise on the cores, memory buses and links the same seed twice gives the
same summary bit for bit, another seed a different simulated time; summary.json records the noise
settings only when noise is enabled. Under NOW (no repartition moves the loads) the noise on the
cores shows in each rank's per-step load spread (summary.json's step_load_cv, step_load_acf1, the
measure native runs report too): a larger coefficient of variation and a larger lag-1
autocorrelation than without noise, averaged over the ranks.

  tests/scripts/check_noise.py --demsim build/smpi/demsim --out DIR"""
import os
import sys

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
WHO = "check_noise.py"
BASE = [os.path.join(SOURCE, "scenarios", "case1.cfg"), "-n", "20000", "-s", "40", "-r", "10", "-p", "RW",
        "-b", "reference"]
NOISE = ["-S", "noise.enabled=true", "-S", "noise.dt=0.001", "-S", "noise.horizon=10",
         "-S", "noise.cpu_cv=0.3", "-S", "noise.cpu_tau=0.01", "-S", "noise.mem_cv=0.2", "-S", "noise.mem_tau=0.02",
         "-S", "noise.net_cv=0.2", "-S", "noise.net_tau=0.02"]
KEYS = ("sim_time_s", "kinetic_energy_end_J", "repartitions", "lambda_max_percent")
OFF = ["-S", "noise.enabled=false"]
ZERO = ["-S", "noise.enabled=true", "-S", "noise.cpu_cv=0", "-S", "noise.mem_cv=0", "-S", "noise.net_cv=0"]


def without_noise_line(out):
    """case1.cfg without its noise line (the scenario as it was before the cloud varied), in out."""
    src = os.path.join(SOURCE, "scenarios", "case1.cfg")
    with open(src) as f:
        text = "".join(line for line in f if not line.startswith("noise ="))
    text = text.replace('"../platforms/', '"' + os.path.join(SOURCE, "platforms") + "/")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "case1-no-noise-line.cfg")
    with open(path, "w") as f:
        f.write(text)
    return path


def same_but_wall(a, b):
    """The keys where two summaries differ, but the wall-clock fields and the file name."""
    skip = ("scenario_file",)
    return sorted(k for k in set(a) | set(b) if not k.startswith("wall") and k not in skip and a.get(k) != b.get(k))


def run(name, extra, out):
    return checking.demsim_run(WHO, DEMSIM, BASE + extra, os.path.join(out, name))


def main():
    global DEMSIM
    a = checking.args(__doc__)
    DEMSIM = a.demsim
    errors = []
    plain = run("plain", OFF, a.out)
    bare = checking.demsim_run(WHO, DEMSIM, [without_noise_line(a.out)] + BASE[1:], os.path.join(a.out, "bare"))
    diff = same_but_wall(plain, bare)
    if diff:
        errors.append(f"case1.cfg with noise.enabled = false against case1.cfg without its noise line: {', '.join(diff)} differ")
    default = run("default", [], a.out)
    if default.get("noise", {}).get("cpu_cv", 0) <= 0 or default["sim_time_s"] == plain["sim_time_s"]:
        errors.append(f"case1.cfg as committed: noise {default.get('noise')!r}, sim_time_s {default['sim_time_s']!r} "
                      f"(without noise {plain['sim_time_s']!r}): expected the scenario's noise on")
    zero = run("zero", ZERO, a.out)
    a1 = run("seed1-a", NOISE, a.out)
    a2 = run("seed1-b", NOISE, a.out)
    b = run("seed2", NOISE + ["-S", "noise.seed=2"], a.out)
    if "noise" in plain:
        errors.append("summary.json without noise has a 'noise' field")
    for k in ("sim_time_s", "kinetic_energy_end_J"):
        if zero[k] != plain[k]:
            errors.append(f"noise.enabled with every cv = 0: {k} {zero[k]!r}, without noise {plain[k]!r}")
    for k in KEYS:
        if a1[k] != a2[k]:
            errors.append(f"seed 1 twice: {k} {a1[k]!r} then {a2[k]!r}")
    if b["sim_time_s"] == a1["sim_time_s"]:
        errors.append(f"seed 2 gives seed 1's sim_time_s {a1['sim_time_s']!r}")
    if a1["sim_time_s"] == plain["sim_time_s"]:
        errors.append("noise left sim_time_s as without noise")
    now, now_noisy = run("now", OFF + ["-p", "NOW"], a.out), run("now-noise", NOISE + ["-p", "NOW"], a.out)
    spread = [[sum(r[k] for r in s["per_rank"]) / len(s["per_rank"]) for k in ("step_load_cv", "step_load_acf1")]
              for s in (now, now_noisy)]
    if not (spread[1][0] > spread[0][0] and spread[1][1] > spread[0][1]):
        errors.append(f"per-step load spread under NOW (cv, lag-1 autocorrelation): without noise {spread[0]}, "
                      f"with noise {spread[1]}: expected both larger with noise")
    if a1.get("noise", {}).get("seed") != 1 or b.get("noise", {}).get("seed") != 2 or a1["noise"].get("cpu_cv") != 0.3:
        errors.append(f"summary.json's noise record: {a1.get('noise')!r}, {b.get('noise')!r}")
    print(f"{WHO}: sim_time_s plain {plain['sim_time_s']}, seed 1 {a1['sim_time_s']} (twice), seed 2 {b['sim_time_s']}")
    return checking.verdict(WHO, errors)


DEMSIM = None

if __name__ == "__main__":
    sys.exit(main())
