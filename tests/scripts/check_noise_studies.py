#!/usr/bin/python3
"""CTest check of the studies over noise seeds at the tiny scale (SMPI build):
validation/study/oscillation.py and validation/study/damping_noise.py.

    tests/scripts/check_noise_studies.py --demsim build/smpi/demsim --out DIR

oscillation.py on case6-ratio0 under NOW and RW, seeds 1 and 2: exit status 0; OSCILLATION.md with
the scenario's table (a row per policy) and its "What it says"; oscillation.png not blank;
oscillation.json with the six runs, none failed; NOW never changes the counts; with noise RW
changes them more than without, for each seed; the two seeds give RW different simulated times;
the noisy runs record their seed and the scenario's cpu noise, the noiseless ones no noise.
damping_noise.py on spiky-p2-d50 under NOW, RW and RW5, seeds 1 and 2: exit status 0;
DAMPING-NOISE.md with the table and "What it says"; damping_noise.png; the noise's correlation
time scaled by the JSON's noise_factor (below 1 at this scale) in every noisy run's summary.
The emulated scenarios' noise line is make_scenarios.py's.
Bad arguments (--seeds 0, an unknown scenario) exit with 2. Exit status 0 when all holds, else 1.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(TOP, "validation", "study")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "scenarios"))
import checking  # noqa: E402
from make_scenarios import EMULATED, NOISE, noise_line  # noqa: E402

WHO = "check_noise_studies.py"


def study(script, out, demsim, args):
    cmd = [sys.executable, os.path.join(STUDY, script), "--scale", "tiny", "--seeds", "2", "--out", out,
           "--demsim", demsim] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout)
    return p.returncode


def summary(out, seed, run):
    with open(os.path.join(out, str(seed), run, "summary.json")) as f:
        return json.load(f)


def check_emulated_noise(errors):
    """The scenarios compared with real runs carry make_scenarios.py's noise line as it writes it."""
    for name, extra in EMULATED.items():
        path = os.path.join(TOP, "scenarios", name)
        if noise_line(extra) not in open(path).read().split("\n"):
            errors.append(f"{path}: its noise line is not make_scenarios.py's ({noise_line(extra)}): run it")


def check_oscillation(demsim, out, errors):
    rc = study("oscillation.py", out, demsim, ["--scenarios", "case6-ratio0", "--policies", "NOW", "RW"])
    if rc != 0:
        errors.append(f"oscillation.py exited with {rc}")
    errors += checking.report_problems(out, "OSCILLATION.md", "oscillation.png", "### case6-ratio0",
                                       ["| NOW | ", "| RW | "], ["## What it says", "On case6-ratio0: RW changes"])
    path = os.path.join(out, "oscillation.json")
    if not os.path.exists(path):
        errors.append(f"{path}: missing")
        return
    with open(path) as f:
        runs = {(r["policy"], str(r["seed"])): r for r in json.load(f)["runs"]}
    if len(runs) != 6 or any(r.get("failed") for r in runs.values()):
        errors.append(f"{path}: {len(runs)} runs, failed: {[k for k, r in runs.items() if r.get('failed')]}")
        return
    for k in ("none", "1", "2"):
        if runs[("NOW", k)]["change"] != 0:
            errors.append(f"NOW, seed {k}: the counts changed by {runs[('NOW', k)]['change']} %")
    for k in ("1", "2"):
        if not runs[("RW", k)]["change"] > runs[("RW", "none")]["change"]:
            errors.append(f"RW, seed {k}: count change {runs[('RW', k)]['change']} %, not above the noiseless "
                          f"{runs[('RW', 'none')]['change']} %")
        rec = summary(out, k, "case6-ratio0-RW").get("noise", {})
        if rec.get("seed") != int(k) or rec.get("cpu_cv") != NOISE["cpu_cv"]:
            errors.append(f"seed {k}: summary.json's noise record {rec!r}")
    if runs[("RW", "1")]["time"] == runs[("RW", "2")]["time"]:
        errors.append(f"seeds 1 and 2 give RW the same simulated time {runs[('RW', '1')]['time']!r}")
    if "noise" in summary(out, "none", "case6-ratio0-RW"):
        errors.append("the noiseless run records noise")


def check_damping_noise(demsim, out, errors):
    rc = study("damping_noise.py", out, demsim, ["--scenarios", "spiky-p2-d50", "--policies", "NOW", "RW", "RW5"])
    if rc != 0:
        errors.append(f"damping_noise.py exited with {rc}")
    errors += checking.report_problems(out, "DAMPING-NOISE.md", "damping_noise.png", "### spiky-p2-d50",
                                       ["| NOW | ", "| RW | ", "| RW5 | "], ["## What it says"])
    path = os.path.join(out, "damping_noise.json")
    if not os.path.exists(path):
        errors.append(f"{path}: missing")
        return
    with open(path) as f:
        factor = json.load(f)["noise_factor"]
    if not 0 < factor < 1:
        errors.append(f"{path}: noise_factor {factor} at the tiny scale, expected in (0, 1)")
    for k in ("1", "2"):
        for p in ("NOW", "RW", "RW5"):
            tau = summary(out, k, f"spiky-p2-d50-{p}").get("noise", {}).get("cpu_tau_s")
            if tau is None or abs(tau - NOISE["cpu_tau"] * factor) > 1e-6 * NOISE["cpu_tau"]:
                errors.append(f"seed {k} {p}: noise cpu_tau_s {tau!r}, expected {NOISE['cpu_tau'] * factor:.6g}")


def check_bad_arguments(demsim, out, errors):
    for script, args in (("oscillation.py", ["--seeds", "0"]), ("damping_noise.py", ["--scenarios", "nosuch"])):
        p = subprocess.run([sys.executable, os.path.join(STUDY, script), "--out", out, "--demsim", demsim] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 2:
            errors.append(f"{script} {' '.join(args)}: exit {p.returncode}, expected 2")


def main():
    a = checking.args(__doc__)
    errors = []
    check_emulated_noise(errors)
    check_oscillation(a.demsim, os.path.join(a.out, "oscillation"), errors)
    check_damping_noise(a.demsim, os.path.join(a.out, "damping"), errors)
    check_bad_arguments(a.demsim, os.path.join(a.out, "bad"), errors)
    return checking.verdict(WHO, errors)


if __name__ == "__main__":
    sys.exit(main())
