#!/usr/bin/python3
"""device.code_cost end to end (SMPI build): validation/study/code_cost.py at its tiny scale, and
what a slower code must do to the model. At f = 4 the one-container run's time is between 3.5 and
4 times f = 1's (its kernels take 4 x as long; set-up and host-side work stay), the speed-up of
the 8 heterogeneous containers over one rises with f (the same messages, longer computing), and
the report, its table and its figure are written. Then code_cost_observations.py at its tiny scale:
each of its observations has a figure at every f (1, 2, 4, 8 and the estimate), and case 1's load
ratio (CN-6700-1 over CN-6700-4 under NOW) rises with f towards the kernels' own ratio (more of a
step is kernel time, less is the host-side work both containers do alike).

  tests/scripts/check_code_cost.py --demsim build/smpi/demsim --out DIR"""
import json
import os
import subprocess
import sys

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def main():
    a = checking.args(__doc__)
    script = os.path.join(SOURCE, "validation", "study", "code_cost.py")
    p = subprocess.run([sys.executable, script, "--scale", "tiny", "--out", a.out, "--demsim", a.demsim, "-j", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        print(f"check_code_cost.py: FAIL: code_cost.py exited with {p.returncode}:\n{p.stdout[-3000:]}")
        return 1
    with open(os.path.join(a.out, "code_cost.json")) as f:
        rows = {r["factor"]: r for r in json.load(f)["rows"]}
    errors = []
    if sorted(rows) != [1, 4]:
        errors.append(f"code_cost.json: factors {sorted(rows)}, expected [1, 4]")
    else:
        ratio = rows[4]["one_s"] / rows[1]["one_s"]
        if not 3.5 < ratio <= 4.0:
            errors.append(f"one CN-6700-4: f = 4 takes {ratio:.3f} x f = 1's time, expected in (3.5, 4]")
        if not rows[4]["speedup"] > rows[1]["speedup"]:
            errors.append(f"speed-up {rows[4]['speedup']:.3f} at f = 4, not above {rows[1]['speedup']:.3f} at f = 1")
    errors += checking.report_problems(a.out, "CODE_COST.md", "code_cost.png", "| f | one CN-6700-4 (s)",
                                       ["| 1 |", "| 4 |"], [])
    errors += check_observations(a)
    return checking.verdict("check_code_cost.py", errors)


def check_observations(a):
    out = os.path.join(a.out, "observations")
    script = os.path.join(SOURCE, "validation", "study", "code_cost_observations.py")
    p = subprocess.run([sys.executable, script, "--scale", "tiny", "--out", out, "--demsim", a.demsim, "-j", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        return [f"code_cost_observations.py exited with {p.returncode}:\n{p.stdout[-3000:]}"]
    with open(os.path.join(out, "observations_f.json")) as f:
        obs = json.load(f)
    errors = []
    keys = [f"f{k:g}" for k in obs["factors"]]
    if len(keys) != 5 or len(obs["rows"]) < 5:
        errors.append(f"observations_f.json: {len(keys)} factors and {len(obs['rows'])} rows, expected 5 and >= 5")
    for r in obs["rows"]:
        if any(not r.get(k) for k in keys):
            errors.append(f"observation without a figure at every f: {r}")
    ratio = [r for r in obs["rows"] if r["study"] == "3.3"]
    if len(ratio) != 1:
        errors.append("no case-1 load ratio row")
    else:
        v = [float(ratio[0][k]) for k in keys]
        if any(y <= x for x, y in zip(v, v[1:])):
            errors.append(f"case-1 load ratio against f {v}: expected rising")
    return errors + checking.report_problems(out, "OBSERVATIONS_F.md", "observations_f.png", "| observation (STUDY.md) |",
                                             ["| Case 1: under NOW", "| Case 5: RW5"], ["| f = 8 |"])


if __name__ == "__main__":
    sys.exit(main())
