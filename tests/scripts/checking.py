"""What the CTest check scripts of this folder share: their two arguments and a demsim run that
either leaves a summary or ends the check with its output.

    a = checking.args(__doc__)               # --demsim, --out (created)
    s = checking.demsim_run("check_x.py", a.demsim, [scenario, ...options], out_dir)
"""
import argparse
import json
import os
import subprocess
import sys


def args(doc, extra=None):
    """--demsim and --out (made if missing); extra(ap) may add more arguments."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    if extra:
        extra(ap)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    return a


def demsim_run(who, demsim, run_args, out_dir):
    """`demsim run RUN_ARGS --out OUT_DIR --quiet`; its summary.json, or exit 1 with the command and
    the end of its output."""
    cmd = [demsim, "run"] + list(run_args) + ["--out", out_dir, "--quiet"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        print(f"{who}: FAIL: {' '.join(cmd)} exited with {p.returncode}:\n{p.stdout[-3000:]}")
        sys.exit(1)
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)
