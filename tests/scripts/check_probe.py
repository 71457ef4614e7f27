#!/usr/bin/python3
"""CTest check of `demsim probe` (native build) on this machine.

    tests/scripts/check_probe.py --demsim build/native/demsim --out DIR

1. Bad input exits with 2 before anything runs: an unknown option, --particles 0, --steps x,
   an empty host in --hosts, --partition-particles -5.
2. `demsim probe --quick --out DIR/node`: DIR/node/probe.json has the format's keys, one node
   with rank 0, cores >= 1, bandwidths above 1e8 B/s, a positive FP64 rate, a DEM kernel rate
   on 1 core, the contact-force kernel on 1 core (calibrate_cost's 216,000 particles: times,
   counts, the C reference's ratio) and on every core at once, Zoltan's rate (two ranks, where the
   machine has two cores), at least one OpenCL device, and a date that parses; its platform.xml
   takes the core rate from that kernel, the partition_rate from those runs and the binning_rate
   and permute_bw from the kernel run's binning and permute rows; the contact search over the
   apart and the contact lattice in turns with the kernel (search_1core), and the platform's
   search_rate and search_slot_rate from it.
3. `demsim probe --quick --no-kernels --hosts localhost,localhost --out DIR/pair`: one node
   holding ranks 0 and 1, one pair on the same node, with a positive latency and a bandwidth
   above 1e8 B/s, and no Zoltan rate.
Exit status 0 when all hold, else 1 (each failure printed).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

import checking

NODE_KEYS = ["name", "ranks", "cores", "cpu_model", "llc_bytes", "mem_bytes", "triad_1core_Bps", "triad_allcore_Bps",
             "triad_1core_stressed_Bps", "stress", "gather_1core_Bps", "lattice_1core_Bps", "streams_1core_Bps",
             "flops_peak_1core",
             "vector_lanes", "divider_1core", "kernel_rate", "opencl_devices", "commands"]
TOP_KEYS = ["format", "date", "command", "demsim", "options", "nodes", "pairs"]
check = checking.Checks("check_probe.py")


def probe(demsim, args):
    cmd = [demsim, "probe"] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    print(f"$ {' '.join(cmd)}  -> {p.returncode}\n{p.stdout[-3000:]}")
    return p


def bad_input(demsim, out):
    for args in (["--bogus"], ["--particles", "0"], ["--steps", "x"], ["--hosts", "a,,b"], ["extra"],
                 ["--partition-particles", "-5"]):
        p = probe(demsim, args + ["--out", os.path.join(out, "bad")])
        check(p.returncode == 2, f"probe {' '.join(args)}: exit status {p.returncode}, expected 2")
        check("probe:" in p.stdout, f"probe {' '.join(args)}: no message naming the command")
    check(not os.path.exists(os.path.join(out, "bad")), "bad input created the output directory")


def load(demsim, out, args):
    p = probe(demsim, args + ["--out", out])
    check(p.returncode == 0, f"probe {' '.join(args)}: exit status {p.returncode}")
    path = os.path.join(out, "probe.json")
    if not os.path.exists(path):
        check(False, f"{path} not written")
        return None
    with open(path) as f:
        d = json.load(f)
    for k in TOP_KEYS:
        check(k in d, f"{path}: key '{k}' missing")
    check(d.get("format") == "demsim-probe-1", f"{path}: format {d.get('format')!r}")
    try:
        datetime.datetime.strptime(d.get("date", ""), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        check(False, f"{path}: date {d.get('date')!r} does not parse")
    check(d.get("options", {}).get("quick") is True, f"{path}: options.quick is not true")
    for n in d.get("nodes", []):
        for k in NODE_KEYS:
            check(k in n, f"{path}: node key '{k}' missing")
        check(n.get("cores", 0) >= 1, f"{path}: cores {n.get('cores')}")
        for k in ("triad_1core_Bps", "triad_allcore_Bps", "gather_1core_Bps", "lattice_1core_Bps", "streams_1core_Bps",
                  "streams_allcore_Bps"):
            check((n.get(k) or 0) > 1e8, f"{path}: {k} = {n.get(k)}, expected > 1e8 B/s")
        check((n.get("flops_peak_1core") or 0) > 1e8, f"{path}: flops_peak_1core = {n.get('flops_peak_1core')}")
        check((n.get("divider_1core") or 0) > 1e7, f"{path}: divider_1core = {n.get('divider_1core')}, expected > 1e7")
        check((n.get("mem_bytes") or 0) > 1e8, f"{path}: mem_bytes = {n.get('mem_bytes')}")
        if n.get("cores", 0) >= 2:
            check((n.get("triad_1core_stressed_Bps") or 0) > 1e8 or n.get("stress_skipped"),
                  f"{path}: triad_1core_stressed_Bps = {n.get('triad_1core_stressed_Bps')} and no reason")
        check(len(n.get("opencl_devices", [])) >= 1, f"{path}: no OpenCL device listed")
        for dev in n.get("opencl_devices", []):
            check(dev.get("type") in ("cpu", "gpu", "accelerator", "other") and dev.get("compute_units", 0) >= 1,
                  f"{path}: OpenCL device {dev}")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--demsim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    # the probe's mpirun must not take the test's own MPI environment for its own
    for k in [k for k in os.environ if k.startswith(("OMPI_", "PMIX_", "OPAL_", "ORTE_"))]:
        del os.environ[k]
    bad_input(a.demsim, a.out)

    d = load(a.demsim, os.path.join(a.out, "node"), ["--quick"])
    if d:
        check(len(d["nodes"]) == 1 and d["nodes"][0].get("ranks") == [0], f"one node with rank 0: {d['nodes']}")
        check(d["pairs"] == [], "one rank, yet pairs")
        for n in d["nodes"]:
            one = [k for k in n.get("kernel_rate", []) if k.get("cores") == 1]
            check(one and (one[0].get("particle_steps_per_s") or 0) > 0 and (one[0].get("loop_s") or 0) > 0,
                  f"kernel rate on 1 core: {n.get('kernel_rate')}")
            check(n.get("kernel_rate", [{}])[-1].get("cores") == n.get("cores"),
                  f"no kernel rate on all {n.get('cores')} cores: {n.get('kernel_rate')}")
            k = n.get("contact_kernel_1core") or {}
            check(k.get("particles") == 216000 and 0 < k.get("best_s", 0) <= k.get("median_s", 0) < 10
                  and k.get("flops", 0) > k.get("divsqrt", 0) > 0 and k.get("traffic_B", 0) > 0
                  and k.get("reference_over_kernel", 0) > 0, f"contact-force kernel on 1 core: {k}")
            # the cell binning of the same lattice (calibrate_cost's binning row): 216,000 particles, 0.1-100 ms
            check(k.get("binning_particles") == 216000 and 1e-4 < (k.get("binning_median_s") or 0) < 0.1,
                  f"binning on 1 core: {k}")
            # the store's permutation of the same lattice (calibrate_cost's permute row): every row but
            # the last of each 50 moves, 300-500 B a row (the slots' width), 1 ms-10 s
            check(200000 * 300 < (k.get("permute_bytes") or 0) < 216000 * 500
                  and 1e-3 < (k.get("permute_median_s") or 0) < 10, f"the store's permutation on 1 core: {k}")
            # the search over the apart and the contact lattice in turns with the force kernel: about one
            # slot in 20 particles apart (wall slots), about six a particle in contact; each search takes
            # 0.1-10 x the force kernel (calibrate_cost --search-turns)
            s = n.get("search_1core") or {}
            check(s.get("particles") == 216000 and s.get("turns") == 15
                  and 0 < (s.get("apart_slots") or -1) < 216000 * 0.1 < 216000 * 5 < (s.get("contact_slots") or 0)
                  and 0.1 < (s.get("apart_over_forces") or 0) < (s.get("contact_over_forces") or 0) < 10,
                  f"the contact search apart and in contact: {s}")
            if n.get("cores", 1) > 1:
                check(k.get("all_cores") == n.get("cores") and 0 < k.get("all_cores_median_s", 0) < 10,
                      f"contact-force kernel on every core at once: {k}")
                # Zoltan's rate: two ranks, 20,000 particles (--quick), a few calls of 10,000 each: far above 1e5
                check((n.get("partition_rate") or 0) > 1e5 and n.get("partition_particles") == 20000,
                      f"Zoltan's rate: {n.get('partition_rate')} particle-levels/s over {n.get('partition_particles')}")
                check(any(c.startswith("mpirun -np 2 demsim run") for c in n.get("commands", [])),
                      f"the Zoltan runs' command not listed: {n.get('commands')}")
        xml = os.path.join(a.out, "node", "platform.xml")
        check(os.path.isfile(xml) and "MEASURED by this probe" in open(xml).read(),
              "the probe's platform does not take the core rate from its contact-force kernel")
        if os.path.isfile(xml) and d["nodes"][0].get("partition_rate"):
            check('<prop id="partition_rate"' in open(xml).read(), "the probe's platform has no partition_rate")
        if os.path.isfile(xml):
            check('<prop id="binning_rate"' in open(xml).read(), "the probe's platform has no binning_rate")
            check('<prop id="permute_bw"' in open(xml).read(), "the probe's platform has no permute_bw")
            check('<prop id="search_rate"' in open(xml).read() and '<prop id="search_slot_rate"' in open(xml).read(),
                  "the probe's platform has no search_rate and search_slot_rate")

    d = load(a.demsim, os.path.join(a.out, "pair"), ["--quick", "--no-kernels", "--hosts", "localhost,localhost"])
    if d:
        check(len(d["nodes"]) == 1 and d["nodes"][0].get("ranks") == [0, 1], f"one node with ranks [0, 1]: {d['nodes']}")
        check(len(d["pairs"]) == 1, f"one pair expected: {d['pairs']}")
        check(d["nodes"][0].get("partition_rate") is None, "--no-kernels, yet Zoltan timed")
        for p in d["pairs"]:
            check(p.get("rank_a") == 0 and p.get("rank_b") == 1 and p.get("same_node") is True, f"pair {p}")
            check((p.get("latency_s") or 0) > 0, f"latency {p.get('latency_s')}")
            check((p.get("bandwidth_Bps") or 0) > 1e8, f"bandwidth {p.get('bandwidth_Bps')}")
            check([s.get("bytes") for s in p.get("sizes", [])] == [8, 1024, 65536, 1048576, 8388608],
                  f"sizes {p.get('sizes')}")
            check(all((s.get("one_way_s") or 0) > 0 for s in p.get("sizes", [])), f"one-way times {p.get('sizes')}")
    return checking.tally("check_probe.py", check.failures, "OK")


if __name__ == "__main__":
    sys.exit(main())
