"""What the CTest check scripts of this folder share: their two arguments, a demsim run that
either leaves a summary or ends the check with its output, the checks of a study's report and
figure, and the verdict lines that end a check.

    a = checking.args(__doc__)               # --demsim, --out (created)
    s = checking.demsim_run("check_x.py", a.demsim, [scenario, ...options], out_dir)
    errors += checking.report_problems(out, "X.md", "x.png", heading, row_starts, marks)
    return checking.verdict("check_x.py", errors)
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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


def report_problems(out, md, png, heading, row_starts, marks):
    """What is wrong with a study script's report DIR/md and figure DIR/png: the table under
    `heading`, a row starting with each of row_starts that did not fail, every text of marks
    (its paragraph), a non-blank PNG. A list of messages, empty when all is there."""
    path = os.path.join(out, md)
    if not os.path.exists(path):
        return [f"{path}: missing"]
    text = open(path).read()
    errors = [] if heading in text else [f"{path}: no table {heading!r}"]
    for start in row_starts:
        if not any(line.startswith(start) and "failed" not in line for line in text.splitlines()):
            errors.append(f"{path}: no row {start!r}")
    errors += [f"{path}: no {m!r}" for m in marks if m not in text]
    problem = png_problem(os.path.join(out, png))
    return errors + ([f"{png}: {problem}"] if problem else [])


def png_problem(path):
    """None if path is a non-blank PNG, else what is wrong."""
    if not os.path.exists(path):
        return "missing"
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 64 or blob[:8] != PNG_SIGNATURE:
        return "not a PNG (signature)"
    length, ctype = struct.unpack(">I4s", blob[8:16])
    if ctype != b"IHDR" or length != 13:
        return "no IHDR chunk"
    width, height, depth, colour = struct.unpack(">IIBB", blob[16:26])
    if width == 0 or height == 0:
        return "zero size"
    # concatenate the IDAT chunks and look at the pixels
    pos, idat = 8, b""
    while pos + 8 <= len(blob):
        n, t = struct.unpack(">I4s", blob[pos:pos + 8])
        if t == b"IDAT":
            idat += blob[pos + 8:pos + 8 + n]
        pos += 12 + n
    try:
        raw = zlib.decompress(idat)
    except zlib.error:
        return "corrupt image data"
    # the filter byte of each row aside, a blank image compresses to very few distinct bytes
    if len(set(raw)) < 8:
        return "blank image"
    return None


def verdict(who, errors):
    """Each error as "FAIL: ...", then "WHO: FAILED" or "WHO: ok"; the exit status."""
    for e in errors:
        print("FAIL:", e)
    print(f"{who}:", "FAILED" if errors else "ok")
    return 1 if errors else 0


class Checks:
    """The checks of a script: check(cond, what) records `what` when cond is false (and prints it
    at once with `who`, when given); check.failures lists them; the value of cond is returned."""

    def __init__(self, who=None):
        self.who, self.failures = who, []

    def __call__(self, cond, what):
        if not cond:
            self.failures.append(what)
            if self.who:
                print(f"{self.who}: FAIL: {what}")
        return bool(cond)


def fail_each(who, errors):
    """Each error as "WHO: FAIL: ..."; the exit status."""
    for e in errors:
        print(f"{who}: FAIL: {e}")
    return 1 if errors else 0


def tally(who, failures, ok):
    """"WHO: N failure(s)" or "WHO: OK" (ok: the words of a pass); the exit status."""
    if failures:
        for f in failures:
            print(f"{who}: FAIL: {f}")
        print(f"{who}: {len(failures)} failure(s)")
        return 1
    print(f"{who}: {ok}")
    return 0
