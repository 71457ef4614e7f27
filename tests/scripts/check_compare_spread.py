#!/usr/bin/python3
"""Test (CTest validation_compare_spread): validation/study/compare_spread.py on three made-up
comparisons whose medians are known: total time NOW errors -20, +10, +5 % (median +5: within
15 %), RW -30, -20, -16 % (median -20: not within), the gain +1, -8, +4 points (median +1:
within 5). SPREAD.md and spread.json give those medians and spreads, each comparison's files are
copied beside them; one comparison, or a folder without compare_real.json, exits 2.

    check_compare_spread.py --demsim (unused) --out DIR
"""
import json
import os
import subprocess
import sys

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(TOP, "validation", "study", "compare_spread.py")


def comparison(d, now_err, rw_err, gain_pts):
    os.makedirs(d, exist_ok=True)
    rows = [dict(what="total time (s)", policy="NOW", measured=10.0, predicted=10.0 * (1 + now_err / 100),
                 error_percent=now_err),
            dict(what="total time (s)", policy="RW", measured=8.0, predicted=8.0 * (1 + rw_err / 100), error_percent=rw_err),
            dict(what="gain of RW over NOW (%)", policy="RW", measured=20.0, predicted=20.0 + gain_pts, error_percent=None)]
    with open(os.path.join(d, "compare_real.json"), "w") as f:
        json.dump(dict(scenario="/x/case1-local.cfg", rows=rows), f)
    with open(os.path.join(d, "COMPARE.md"), "w") as f:
        f.write("# made up\n")


def main():
    a = checking.args(__doc__)
    check = checking.Checks()
    dirs = [os.path.join(a.out, n) for n in ("c1", "c2", "c3")]
    for d, e in zip(dirs, [(-20, -30, 1), (10, -20, -8), (5, -16, 4)]):
        comparison(d, *e)
    out = os.path.join(a.out, "spread")
    p = subprocess.run([sys.executable, TOOL] + dirs + ["--out", out], capture_output=True, text=True)
    check(p.returncode == 0, f"compare_spread.py exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        rows = {(r["what"], r["policy"]): r for r in json.load(open(os.path.join(out, "spread.json")))["rows"]}
        now, rw, gain = rows[("total time (s)", "NOW")], rows[("total time (s)", "RW")], rows[("gain of RW over NOW (%)", "RW")]
        check(abs(now["error_median"] - 5) < 1e-9 and now["within"] is True, f"NOW {now}")
        check(abs(rw["error_median"] + 20) < 1e-9 and rw["within"] is False, f"RW {rw}")
        check(abs(gain["error_median"] - 1) < 1e-9 and gain["within"] is True and gain["unit"] == "points", f"gain {gain}")
        md = open(os.path.join(out, "SPREAD.md")).read()
        check("| total time (s) | NOW | 10 | 10.5 | +5.0% | -20.0 to +10.0% | yes |" in md, "SPREAD.md NOW row")
        check("| gain of RW over NOW (%) | RW | 20 | 21 | +1.0 points | -8.0 to +4.0 points | yes |" in md, "gain row")
        check(all(os.path.isfile(os.path.join(out, n, "compare_real.json")) for n in ("c1", "c2", "c3")), "copies")
        check(os.path.getsize(os.path.join(out, "spread.png")) > 5000, "spread.png")
    p = subprocess.run([sys.executable, TOOL, dirs[0], "--out", out], capture_output=True, text=True)
    check(p.returncode == 2 and "at least two" in p.stderr, f"one comparison: exit {p.returncode} {p.stderr}")
    p = subprocess.run([sys.executable, TOOL, dirs[0], a.out, "--out", out], capture_output=True, text=True)
    check(p.returncode == 2 and "no compare_real.json" in p.stderr, f"a folder without one: exit {p.returncode}")
    return checking.verdict("check_compare_spread", check.failures)


if __name__ == "__main__":
    sys.exit(main())
