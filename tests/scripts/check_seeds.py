#!/usr/bin/python3
"""CTest check of validation/study/run_validation.py --seeds at the tiny scale (SMPI build).

    tests/scripts/check_seeds.py --demsim build/smpi/demsim --out DIR [-j N]

Runs run_validation.py --scale tiny --seeds 2 (without the tornado and the second estimate) into
DIR, then checks: every case run has its seed-1 run in DIR/runs/<run>/ (noise.seed 1 in its
summary.json) and its seed-2 run in DIR/runs/seed2/<run>/ (noise.seed 2), the full-length runs
none; the seed-2 runs' simulated times differ from seed 1's; REPORT.md says "Noise seeds 1 to 2",
every gain of the observation tables carries "[mean (min to max) over 2 seeds: ...]" with min <=
mean <= max, case 1's and case 2's equal to the spread of the two runs' gains, the summary's
case 1 cell the same as the detail's; --resume --seeds 2 runs nothing again. Without a run: the
--submit path puts the seed-2 runs in the same array as seed 1's (into DIR/runs/seed2, with
noise.seed 2), and one seed gives no spread. Exit status 0 when all holds, else 1.
"""
import json
import os
import re
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
STUDY = os.path.join(os.path.dirname(os.path.dirname(HERE)), "validation", "study")
sys.path.insert(0, HERE)
sys.path.insert(0, STUDY)
import checking  # noqa: E402

WHO = "check_seeds.py"
SPREAD = re.compile(r"\[mean \(min to max\) over (\d+) seeds: ([^\]]*)\]")
ENTRY = re.compile(r"([+-]?[0-9]+\.[0-9]) % \(([+-]?[0-9]+\.[0-9]) to ([+-]?[0-9]+\.[0-9])\)")


def validation(a, extra=()):
    """run_validation.py --scale tiny --seeds 2 into a.out; (exit status, its output)."""
    cmd = [sys.executable, os.path.join(STUDY, "run_validation.py"), "--scale", "tiny", "--seeds", "2", "--out", a.out,
           "--demsim", a.demsim, "-j", str(a.jobs), "--no-sensitivity", "--no-measured"] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout[-4000:])
    return p.returncode, p.stdout


def summary(path):
    with open(os.path.join(path, "summary.json")) as f:
        return json.load(f)


def check_runs(check, out, names):
    """Seed 1 and seed 2 of every case run, with their seeds; the seed-2 times not seed 1's."""
    differ = 0
    for n in names:
        d1, d2 = os.path.join(out, "runs", n), os.path.join(out, "runs", "seed2", n)
        if not (check(os.path.exists(os.path.join(d1, "summary.json")), f"{d1}: no summary.json")
                and check(os.path.exists(os.path.join(d2, "summary.json")), f"{d2}: no summary.json")):
            continue
        s1, s2 = summary(d1), summary(d2)
        check((s1.get("noise") or {}).get("seed") == 1, f"{d1}: noise.seed {s1.get('noise')}, expected 1")
        check((s2.get("noise") or {}).get("seed") == 2, f"{d2}: noise.seed {s2.get('noise')}, expected 2")
        differ += s1["sim_time_s"] != s2["sim_time_s"]
    check(differ >= len(names) // 2, f"the seed-2 runs' simulated times differ from seed 1's in {differ} of "
                                     f"{len(names)} runs: the seed changes nothing?")
    return differ


def expected_spread(out, case):
    """"m % (lo to hi)" of case's gain of RW over NOW from its two seeds' summaries."""
    gains = []
    for d in (os.path.join(out, "runs"), os.path.join(out, "runs", "seed2")):
        t0, t = (summary(os.path.join(d, f"{case}-{p}"))["sim_time_s"] for p in ("NOW", "RW"))
        gains.append((t0 - t) / t0 * 100.0)
    return f"{sum(gains) / 2:.1f} % ({min(gains):.1f} to {max(gains):.1f})"


def check_report(check, out):
    """The header, every gain's spread (min <= mean <= max), case 1's and case 2's against the runs."""
    path = os.path.join(out, "REPORT.md")
    if not check(os.path.exists(path), f"{path}: missing"):
        return
    with open(path) as f:
        text = f.read()
    check("**Noise seeds 1 to 2**" in text, "REPORT.md: the header does not say 'Noise seeds 1 to 2'")
    spreads = SPREAD.findall(text)
    entries = [e for _, body in spreads for e in ENTRY.findall(body)]
    # summary and detail: case 1 (1), case 5 RW and RW5 (2 x 2 stressed counts); other figures: cases 2, 3
    # (1 each) and case 6 (2 ratios x RW and RW5)
    check(len(spreads) >= 2 * 3 + 4 and len(entries) >= 2 * 5 + 6,
          f"REPORT.md: {len(spreads)} spreads with {len(entries)} gains, expected at least 10 with 16")
    check(all(n == "2" for n, _ in spreads), f"REPORT.md: spreads over {sorted({n for n, _ in spreads})} seeds, not 2")
    for m, lo, hi in entries:
        check(float(lo) <= float(m) <= float(hi), f"REPORT.md: mean {m} not within min {lo} and max {hi}")
    lines = text.splitlines()
    for case, row in (("case1", "| Case 1: runtime-adapted weights"), ("case2", "| Case 2: gain of RW over NOW")):
        line = next((x for x in lines if x.startswith(row)), "")  # the summary's (case 1) or the detail's
        want = expected_spread(out, case)
        check(f"over 2 seeds: {want}]" in line, f"REPORT.md: {case}'s gain spread is not {want}: {line[:300]}")
    # the summary's case 1 cell and the detail's (the first two such rows; later tables quote other runs)
    c1 = [x.split("|")[3] for x in lines if x.startswith("| Case 1: runtime-adapted weights")][:2]
    check(len(c1) == 2 and c1[0] == c1[1], f"REPORT.md: the summary's case 1 cell is not the detail's: {c1}")


def check_resume(check, a, out, names):
    """--resume --seeds 2: nothing run again (the summaries untouched), the report written."""
    stamps = {n: os.path.getmtime(os.path.join(out, "runs", "seed2", n, "summary.json")) for n in names}
    rc, text = validation(a, ["--resume"])
    check(rc == 0, f"run_validation.py --resume --seeds 2 exited with {rc}")
    check(not re.search(r"^\[1/", text, re.M), "--resume --seeds 2 ran runs again")
    moved = [n for n in names if os.path.getmtime(os.path.join(out, "runs", "seed2", n, "summary.json")) != stamps[n]]
    check(not moved, f"--resume rewrote the seed-2 runs {moved[:3]}")


def check_submit(check, out):
    """--submit without Slurm: run_all's specs (sweep.slurm_runs stood in for) hold seed 2 in one array."""
    import run_validation as rv
    import sweep
    got = {}

    def fake(a, name, specs, slurm_dir, throttle=None):
        got[name] = specs
        return [{"scenario": os.path.basename(s["scenario"])[:-4], "policy": s["policy"], "status": 0} for s in specs]
    saved, sweep.slurm_runs = sweep.slurm_runs, fake
    try:
        a = types.SimpleNamespace(submit=True, reuse=False, demsim="demsim", jobs=1)
        sc = dict(rv.SCALES["tiny"], name="tiny")
        runs, _ = rv.plan(sc, os.path.join(out, "submit", "scenarios"))
        rv.run_all(a, sc, rv.seeded(runs, 2), os.path.join(out, "submit", "runs"), os.path.join(out, "submit"))
    finally:
        sweep.slurm_runs = saved
    specs = got.get("runs", [])
    two = [s for s in specs if s["outdir"].endswith(os.path.join("runs", "seed2"))]
    check(list(got) == ["runs"] and len(specs) == 2 * len(runs) and len(two) == len(runs),
          f"--submit: arrays {list(got)}, {len(specs)} runs of which {len(two)} in runs/seed2, expected one "
          f"array of {2 * len(runs)} with {len(runs)}")
    check(all(s["extra"][-2:] == ["--set", "noise.seed=2"] for s in two), "--submit: a seed-2 run without noise.seed=2")
    check(not any("noise.seed" in " ".join(s["extra"]) for s in specs if s not in two),
          "--submit: a seed-1 run with a noise.seed option")


def main():
    a = checking.args(__doc__, lambda ap: ap.add_argument("-j", "--jobs", type=int, default=1))
    check = checking.Checks(WHO)
    import report
    import run_validation as rv
    check(report._over_seeds([{}], [("", "case1-NOW", "case1-RW")]) == "", "one seed gives a spread")
    check_submit(check, a.out)
    runs, _ = rv.plan(dict(rv.SCALES["tiny"], name="tiny"), os.path.join(a.out, "submit", "scenarios"))
    names = [rv.run_name(s, p) for s, p in runs]
    rc, _ = validation(a)
    check(rc == 0, f"run_validation.py --seeds 2 exited with {rc}")
    differ = check_runs(check, a.out, names)
    check(not os.path.exists(os.path.join(a.out, "runs", "seed2", "case1-full-NOW")), "a full-length run with seed 2")
    check_report(check, a.out)
    check_resume(check, a, a.out, names)
    return checking.tally(WHO, check.failures, f"OK: {len(names)} case runs with seeds 1 and 2, {differ} seed-2 "
                                                "times differing, the report's spreads consistent")


if __name__ == "__main__":
    sys.exit(main())
