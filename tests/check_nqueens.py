#!/usr/bin/python3
"""Runs one nqueens command (after '--') and checks its JSON line: the exit status, the solution
count against the known one, at most --max-wide-inflight wide-area steals in flight on any rank,
at least --min-wide-steals wide-area steal requests in all."""
import argparse
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--status", type=int, default=0, help="expected exit status (0)")
ap.add_argument("--max-wide-inflight", type=int)
ap.add_argument("--min-wide-steals", type=int)
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
p = subprocess.run(cmd, capture_output=True, text=True)
sys.stdout.write(p.stdout[-3000:])
sys.stderr.write(p.stderr[-3000:])
if p.returncode != a.status:
    sys.exit(f"check_nqueens: exit status {p.returncode}, expected {a.status}")
if a.status != 0:
    sys.exit(0)
lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
if not lines:
    sys.exit("check_nqueens: no JSON line")
d = json.loads(lines[-1])
errors = []
if not d["correct"] or d["solutions"] != d["expected"]:
    errors.append(f"{d['solutions']} solutions, expected {d['expected']}")
if sum(r["tasks"] for r in d["per_rank"]) != d["tasks"] or len(d["per_rank"]) != d["ranks"]:
    errors.append("per-rank figures do not add up")
worst = max(r["wide_inflight_max"] for r in d["per_rank"])
if a.max_wide_inflight is not None and worst > a.max_wide_inflight:
    errors.append(f"a rank had {worst:.0f} wide-area steals in flight (at most {a.max_wide_inflight})")
if a.min_wide_steals is not None and d["steal_wide"] < a.min_wide_steals:
    errors.append(f"{d['steal_wide']:.0f} wide-area steal requests (at least {a.min_wide_steals} expected)")
if errors:
    sys.exit("check_nqueens: " + "; ".join(errors))
print(f"check_nqueens: {d['n']}-queens on {d['ranks']} rank(s), {d['strategy']}: {d['solutions']} solutions, "
      f"wide-area steals {d['steal_wide']:.0f}, at most {worst:.0f} in flight on a rank")
