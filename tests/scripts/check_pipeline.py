#!/usr/bin/python3
"""CTest check of the validation pipeline, end to end at the tiny scale.

    tests/scripts/check_pipeline.py --demsim build/smpi/demsim --out DIR

Runs validation/study/run_validation.py --scale tiny (every case, every policy, every figure, the report)
into DIR, then checks that every figure the report links exists, is a PNG (8-byte signature, an
IHDR chunk with a non-zero size) and is not blank (more than one colour in its pixels), and that
REPORT.md has the observation table with every STUDY.md observation and no empty cell.
This is a Python checker rather than a CUnit suite because what it tests is a Python pipeline.
Exit status 0 when everything holds; otherwise it prints each failure and exits 1.
"""
import argparse
import os
import re
import subprocess
import sys
import time

from checking import png_problem

HERE = os.path.dirname(os.path.abspath(__file__))
STUDY = os.path.join(os.path.dirname(os.path.dirname(HERE)), "validation", "study")
# one key phrase per observation of shared/STUDY.md ("Observations of the study")
OBSERVATIONS = ["3.3 x", "highest of all cases", "48.7 %", "three repartitions", "Case 4: CPU stress",
                "6.7 % to 20.1 %", "RW5 improves on RW", "single repartition", "oscillate",
                "Highly heterogeneous"]
EXPECTED_FIGURES = ["lambda_cases1-3.png", "exectime_cases1-3.png", "case1_ranks.png", "case2_ranks.png",
                    "case3_ranks.png", "case3_wait_comm.png", "case4_total_time.png", "case5_total_time.png",
                    "case5_lambda.png", "case6_total_time.png", "tornado.png"]


def whatif_problems():
    """The simd_lanes what-if's pieces against closed forms: the platform variant scales every
    simd_lanes (at least 1), its factor is the measured ratio over the CN-6700's lanes (none
    without a measurement), and the report's table shows a variant's lambda and gain."""
    sys.path.insert(0, STUDY)
    import run_validation as rv
    import report
    errors = []
    xml = '<host id="a"><prop id="simd_lanes" value="4"/></host><host id="b"><prop id="simd_lanes" value="2"/></host>'
    got = re.findall(r'simd_lanes" value="([0-9.]+)"', rv.platform_variant(xml, "SIMD_LANES", 0.65))
    if got != ["2.6", "1.3"]:
        errors.append(f"platform_variant SIMD_LANES: {got}, expected ['2.6', '1.3']")
    got = re.findall(r'simd_lanes" value="([0-9.]+)"', rv.platform_variant(xml, "SIMD_LANES", 0.2))
    if got != ["1", "1"]:
        errors.append(f"platform_variant SIMD_LANES: {got}, expected at least one lane ['1', '1']")
    k = rv.whatif_lanes_factor({"probe": {"scalar_over_lanes": 2.6}})
    if k is None or abs(k - 2.6 / 4.0) > 1e-12:
        errors.append(f"whatif_lanes_factor: {k}, expected 2.6 / 4 (openstack.xml's CN-6700: 4 lanes)")
    if rv.whatif_lanes_factor({"probe": {}}) is not None or rv.whatif_lanes_factor(None) is not None:
        errors.append("whatif_lanes_factor: a value without the measurement")
    sens = {"whatif": {"const": "SIMD_LANES", "what": "w", "k": 0.65, "ratio": 2.6}}
    lines = report.lanes_whatif([("case1", "SIMD_LANES", 0.65, 70.0, 12.5)], {"case1": (71.0, 13.0)}, sens)
    if not any(line.startswith("| case1 | 71.0 / +13.0 | 70.0 / +12.5 |") for line in "\n".join(lines).splitlines()):
        errors.append(f"lanes_whatif: no row 'case1 | 71.0 / +13.0 | 70.0 / +12.5' in {lines}")
    if report.lanes_whatif([], {}, {"whatif": None}):
        errors.append("lanes_whatif: a table without the what-if")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args()
    t0 = time.time()
    cmd = [sys.executable, os.path.join(STUDY, "run_validation.py"), "--scale", "tiny", "--out", a.out,
           "--demsim", a.demsim, "-j", str(a.jobs), "--local-speed", "4.1e9"]
    rc = subprocess.run(cmd).returncode
    errors = whatif_problems()
    if rc != 0:
        errors.append(f"run_validation.py exited with {rc}")
    report = os.path.join(a.out, "REPORT.md")
    if not os.path.exists(report):
        errors.append("REPORT.md not written")
        text = ""
    else:
        with open(report) as f:
            text = f.read()
    linked = sorted(set(re.findall(r"figures/([A-Za-z0-9_.-]+\.png)", text)))
    for name in sorted(set(linked) | set(EXPECTED_FIGURES)):
        p = png_problem(os.path.join(a.out, "figures", name))
        if p:
            errors.append(f"figures/{name}: {p}")
    if "## Second estimate: kernels measured on this machine" not in text:
        errors.append("REPORT.md: no section for the second estimate (device.cost = measured)")
    for key in OBSERVATIONS:
        if key not in text:
            errors.append(f"REPORT.md: no row for the observation '{key}'")
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if any(c == "" for c in cells):
                errors.append(f"REPORT.md: empty cell in: {line[:100]}")
            if "n/a (run missing)" in line:
                errors.append(f"REPORT.md: a run is missing: {line[:100]}")
    for e in errors:
        print(f"check_pipeline.py: FAIL: {e}")
    print(f"check_pipeline.py: {len(linked)} figures linked, {len(errors)} failures, {time.time() - t0:.0f} s")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
