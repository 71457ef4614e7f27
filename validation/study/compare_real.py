#!/usr/bin/python3
"""Predicted against measured on your own cluster: one scenario run natively on the real machines
of a host map and under SMPI on a platform probed from those machines, NOW and RW.

    validation/study/compare_real.py SCENARIO --hostmap MAP [--probe PROBE.json] [--out DIR]
        [--policies NOW RW] [--repeats R] [--sim-repeats K] [--resume] [--quick] [-- extra demsim options]

1. Probe: unless --probe gives an earlier probe.json, `demsim probe` (native build) measures the
   real hosts the map names (memory bandwidth, kernel rates, network) into DIR/probe/probe.json.
2. Platform: platforms/make_platforms.py --probe ... --hostmap MAP writes DIR/platform.xml, a
   SimGrid platform of those machines on which every container of the map is a host.
3. Placement check: `demsim run SCENARIO --set native.hostmap=MAP --dry-run` (a bad map stops
   here, with the message naming the entry, exit status 2).
4. Runs, for each policy: natively (`--set native.hostmap=MAP`: each rank bound to its
   container's cores, each declared stress started on its container's host), R times in rounds
   (each policy once a round, so that the host's drift falls on every policy alike), the median
   run by total time kept. Where the map's hosts are this machine, the contact-force kernel runs
   on every core at once before each round (validation/calibrate_cost, as `demsim probe` does),
   and the platform's core rate is taken from the median of those samples and the probe's
   (DIR/probe-interleaved.json), so that it is the host's over the runs, not at the probe's moment.
   Then K times under SMPI on DIR/platform.xml (--sim-repeats, 3: noise.seed 0 to K-1, the median
   by total time kept; a scenario without noise gives the same run K times, the simulation being
   deterministic). The options after `--` go to every run. --resume keeps what DIR already holds
   (the probe, the kernel samples, every run with its summary.json) and runs only what is missing.
5. Report: DIR/COMPARE.md (total time, lambda, per-rank load and the gain of each policy over
   NOW, predicted against measured with the error), DIR/compare_real.json, DIR/compare_real.png.
With --emulate (as root, native build): the scenario's containers on an emulated cloud on this
machine against SMPI on its platform.file, messages and the DEM's ghost exchange
(validation/study/emulated.py says what and how). With --emulate --hostmap MAP (every host
localhost): the platform is this machine's, probed now (or --probe), with the map's containers
on their cores, joined by --container-link BW,LAT and with --cpu-share CONTAINER=S[,PERIOD], its core
rate sampled before each round of emulated runs (calibration.py); computing and total time are
compared too.
Exit status: 0, 1 when a run failed, 2 on bad input.
"""
import argparse
import json
import os
import time
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "platforms"))
import calibration  # noqa: E402  (the core rate over the runs: kernel samples, interleaved_platform)
import compare  # noqa: E402  (run_policy: one run with a progress line)
import emulated  # noqa: E402  (--emulate)
import figures  # noqa: E402  (matplotlib, Agg backend)
from figures import plt  # noqa: E402
import make_platforms  # noqa: E402


def fail(msg, code=2):
    sys.stderr.write(f"compare_real.py: {msg}\n")
    raise SystemExit(code)


def probe(args, hosts):
    """DIR/probe/probe.json: measured now, or the one given."""
    if args.probe:
        if not os.path.isfile(args.probe):
            fail(f"--probe {args.probe}: no such file (expected a probe.json written by `demsim probe`)")
        return args.probe
    out = os.path.join(args.out, "probe")
    if args.resume and os.path.isfile(os.path.join(out, "probe.json")):
        return os.path.join(out, "probe.json")
    cmd = [args.native, "probe", "--hosts", ",".join(hosts), "--out", out] + (["--quick"] if args.quick else [])
    print("probe: " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(args.out, "probe.log"), "w") as f:
        f.write(p.stdout)
    if p.returncode:
        sys.stderr.write(p.stdout[-3000:])
        fail(f"demsim probe failed (exit {p.returncode}); log in {args.out}/probe.log", 1 if p.returncode != 2 else 2)
    return os.path.join(out, "probe.json")


def median_run(runs):
    ordered = sorted(runs, key=lambda r: r["summary"]["sim_time_s"])
    return ordered[(len(ordered) - 1) // 2]


def search_file(args):
    """The search's samples beside the kernel's (calibration.search_sample)."""
    return os.path.join(args.out, "search-samples.jsonl")


def run_all(args, extra):
    """{policy: {"native": run, "native_all": [runs]}}; a run = {"summary", "wall", "dir"}, and the
    contact-force kernel's interleaved samples (s; empty where not measured). The policies' runs
    are interleaved (round i: each policy once), and before each round the contact-force kernel
    runs on every core at once where the map's hosts are this machine, so that the platform's core
    rate is the host's over the time of the runs (interleaved_platform), not that of the probe's
    moment only."""
    res = {pol: {"native_all": []} for pol in args.policies}
    samples_file = os.path.join(args.out, "kernel-samples.jsonl")
    for f in (samples_file, search_file(args)):
        if os.path.exists(f) and not args.resume:
            os.remove(f)
    local = calibration.all_local(args.hostmap)
    for i in range(args.repeats):
        dirs = {pol: os.path.join(args.out, "native", f"{pol}-{i + 1}") for pol in args.policies}
        kept = args.resume and all(os.path.isfile(os.path.join(d, "summary.json")) for d in dirs.values())
        if local and not kept:
            calibration.kernel_sample(args.native, samples_file)
            calibration.search_sample(args.native, search_file(args))
        for pol, d in dirs.items():
            wall = None
            if not kept:
                rc, wall = compare.run_policy(args.native, args.scenario, pol, d,
                                              ["--set", f"native.hostmap={args.hostmap}"] + extra)
                if rc:
                    fail(f"native run {pol} #{i + 1} failed (exit {rc}); log in {d}/demsim.log", 1 if rc != 2 else 2)
            summary = json.load(open(os.path.join(d, "summary.json")))
            res[pol]["native_all"].append(dict(summary=summary, wall=wall, dir=d))
    for pol in args.policies:
        res[pol]["native"] = median_run(res[pol]["native_all"])
    return res, calibration.read_samples(samples_file)


def map_hosts(hostmap):
    hosts = []
    for _, host, _ in make_platforms.read_hostmap(hostmap):
        if host not in hosts:
            hosts.append(host)
    return hosts


def emulate(args, extra):
    """--emulate: on platform.file as the scenario (or the options) give it; with --hostmap, on a
    platform of this machine probed now (or --probe), the map's containers on its cores, joined by
    --container-link and with --cpu-share, its core rate sampled before each round of emulated runs
    (calibration.py), computing and total time compared too."""
    if not args.hostmap:
        if args.container_link or args.cpu_share:
            fail("--container-link and --cpu-share go with --emulate --hostmap MAP")
        return emulated.main(args, extra)
    args.hostmap = os.path.abspath(args.hostmap)
    if not calibration.all_local(args.hostmap):
        fail(f"--emulate --hostmap {args.hostmap}: every host of the map must be this machine (localhost)")
    try:
        args.link = make_platforms.container_link(args.container_link)
        args.shares = make_platforms.cpu_shares(args.cpu_share)
    except ValueError as e:
        fail(str(e))
    os.makedirs(args.out, exist_ok=True)
    args.probe_json = probe(args, ["localhost"])
    _, plat = calibration.interleaved_platform(args.out, args.probe_json, args.hostmap, [], args.link, args.shares)
    args.probed = True
    return emulated.main(args, extra + ["--set", f"platform.file={plat}"])


def run_smpi(args, res, platform_xml, extra):
    """--sim-repeats SMPI runs a policy (noise.seed 0, 1, ...: SMPI/POLICY, then SMPI/POLICY-seed<k>),
    the median by total time kept, as the native runs'; with --resume a run with its summary.json
    is kept."""
    for pol in args.policies:
        runs = []
        for k in range(args.sim_repeats):
            d = os.path.join(args.out, "smpi", pol + (f"-seed{k}" if k else ""))
            wall = None
            if not (args.resume and os.path.isfile(os.path.join(d, "summary.json"))):
                rc, wall = compare.run_policy(args.smpi, args.scenario, pol, d,
                                              ["--set", f"platform.file={platform_xml}", "--set", f"noise.seed={k}"]
                                              + extra)
                if rc:
                    fail(f"SMPI run {pol} failed (exit {rc}); log in {d}/demsim.log", 1 if rc != 2 else 2)
            runs.append(dict(summary=json.load(open(os.path.join(d, "summary.json"))), wall=wall, dir=d))
        res[pol]["smpi_all"] = runs
        res[pol]["smpi"] = median_run(runs)


def err(pred, meas):
    return (pred - meas) / meas * 100.0 if meas else float("nan")


def rows_of(res):
    """The comparison as rows (what, policy, measured, predicted, error %), and the figures' data."""
    rows = []
    pols = list(res)
    t = {p: (res[p]["native"]["summary"]["sim_time_s"], res[p]["smpi"]["summary"]["sim_time_s"]) for p in pols}
    for p in pols:
        m, s = res[p]["native"]["summary"], res[p]["smpi"]["summary"]
        rows.append(("total time (s)", p, m["sim_time_s"], s["sim_time_s"], err(s["sim_time_s"], m["sim_time_s"])))
        rows.append(("lambda, final (%)", p, m["lambda_final_percent"], s["lambda_final_percent"], None))
        for rm, rs in zip(m["per_rank"], s["per_rank"]):
            rows.append((f"load of rank {rm['rank']} ({rs['host']}) (s)", p, rm["load_s"], rs["load_s"],
                         err(rs["load_s"], rm["load_s"])))
        if p != "NOW" and "NOW" in t:
            gm = (t["NOW"][0] - t[p][0]) / t["NOW"][0] * 100.0
            gp = (t["NOW"][1] - t[p][1]) / t["NOW"][1] * 100.0
            rows.append((f"gain of {p} over NOW (%)", p, gm, gp, None))
    return rows


def report(args, res, probe_json, platform_xml):
    rows = rows_of(res)
    pr = json.load(open(probe_json))
    lines = [f"# Predicted against measured: {os.path.basename(args.scenario)}", "",
             f"Command: `validation/study/compare_real.py {' '.join(args.argv)}` (report written "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before the runs: "
             f"{args.load_before}).", "",
             f"Scenario `{args.scenario}`, host map `{args.hostmap}`; platform `{platform_xml}` from the probe "
             f"`{probe_json}` ({pr.get('command', '?')}, {pr.get('date', '?')}).",
             f"Native runs: {args.repeats} per policy, interleaved (a round: each policy once), the median by total "
             f"time kept; SMPI: {args.sim_repeats} run(s) per policy (noise seeds 0-{args.sim_repeats - 1}: the "
             "scenario's noise, if it has one), the median by total time kept.",
             (calibration.rate_line(probe_json) + " " + calibration.search_line(probe_json)).rstrip(),
             "Total time: the time loop (summary.json's sim_time_s; set-up and the last output are outside it). "
             "Error = (predicted - measured) / measured; for lambda and the gain the difference is in points.", "",
             "| what | policy | measured | predicted | error |", "|---|---|---|---|---|"]
    for what, pol, m, s, e in rows:
        e_txt = f"{e:+.1f} %" if e is not None else f"{s - m:+.1f} points"
        lines.append(f"| {what} | {pol} | {m:.4g} | {s:.4g} | {e_txt} |")
    lines += ["", "Native runs (total time, s): " + "; ".join(
        f"{p}: " + ", ".join(f"{r['summary']['sim_time_s']:.4g}" for r in res[p]["native_all"]) for p in res), "",
        "SMPI runs (total time, s): " + "; ".join(
            f"{p}: " + ", ".join(f"{r['summary']['sim_time_s']:.4g}" for r in res[p]["smpi_all"]) for p in res), "",
        "Placement of the native ranks (summary.json): " + "; ".join(
            f"rank {r['rank']} on {r.get('processor', '?')} cpus {r.get('cpus', '?')}"
            for r in res[list(res)[0]]["native"]["summary"]["per_rank"]), "",
        "![predicted against measured](compare_real.png)", ""]
    with open(os.path.join(args.out, "COMPARE.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "compare_real.json"), "w") as f:
        # when the native runs were made (a prediction remade with --resume keeps them): compare_spread.py's date
        first = min(os.path.getmtime(os.path.join(r["dir"], "summary.json")) for p in res for r in res[p]["native_all"])
        json.dump({"scenario": args.scenario, "hostmap": args.hostmap, "probe": probe_json, "platform": platform_xml,
                   "measured_from": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(first)),
                   "rows": [dict(what=w, policy=p, measured=m, predicted=s, error_percent=e)
                            for w, p, m, s, e in rows]},
                  f, indent=1)
    figure(res, os.path.join(args.out, "compare_real.png"))
    first = lines.index("| what | policy | measured | predicted | error |")
    print("\n".join(lines[first:first + len(rows) + 2]))
    print(f"report: {os.path.join(args.out, 'COMPARE.md')}")


def figure(res, path):
    pols = list(res)
    fig, axes = plt.subplots(1, 1 + len(pols), figsize=(4.2 * (1 + len(pols)), 3.6))
    ax = axes[0]
    x = range(len(pols))
    ax.bar([i - 0.2 for i in x], [res[p]["native"]["summary"]["sim_time_s"] for p in pols], 0.4, label="measured")
    ax.bar([i + 0.2 for i in x], [res[p]["smpi"]["summary"]["sim_time_s"] for p in pols], 0.4, label="predicted")
    ax.set_xticks(list(x), pols)
    ax.set_ylabel("total time (s)")
    ax.set_title("total time")
    ax.legend()
    for ax, p in zip(axes[1:], pols):
        m, s = res[p]["native"]["summary"]["per_rank"], res[p]["smpi"]["summary"]["per_rank"]
        xs = range(len(m))
        ax.bar([i - 0.2 for i in xs], [r["load_s"] for r in m], 0.4, label="measured")
        ax.bar([i + 0.2 for i in xs], [r["load_s"] for r in s], 0.4, label="predicted")
        ax.set_xticks(list(xs), [f"{r['rank']}: {r['host']}" for r in s])
        ax.set_ylabel("computational load (s)")
        ax.set_title(f"per-rank load, {p}")
    figures._save(fig, os.path.dirname(path), os.path.basename(path))


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--hostmap", help="the native.hostmap file: containers -> real hosts and cores (with --emulate: "
                    "this machine's, for a probed platform)")
    ap.add_argument("--emulate", action="store_true", help="the scenario's containers on an emulated cloud (root): "
                    "the network model against it (validation/study/emulated.py)")
    ap.add_argument("--steps", type=int, default=100, help="with --emulate: steps of the DEM runs (100)")
    ap.add_argument("--particles", type=int, default=500000, help="with --emulate: particles of the DEM runs")
    ap.add_argument("--resume", action="store_true", help="keep the runs (and the probe, the kernel samples) already "
                    "made in OUT: only the missing ones run")
    ap.add_argument("--mpi-eager", type=int, default=0, help="with --emulate: Open MPI's TCP eager limit, bytes, in "
                    "the emulated runs (default: Open MPI's, 64 KiB)")
    ap.add_argument("--probed", action="store_true", help="with --emulate: platform.file is a probed platform of this "
                    "machine (make_platforms.py --probe --container-link): compare computing and total time too")
    ap.add_argument("--runs", help="with --emulate: where the runs go (default OUT/runs)")
    ap.add_argument("--lattices", nargs="+", default=["contact", "apart"], choices=["contact", "apart"],
                    help="with --emulate: the DEM runs' lattices")
    ap.add_argument("--probe", help="an earlier probe.json (default: probe now)")
    ap.add_argument("--container-link", help="with --emulate --hostmap: BANDWIDTH,LATENCY (B/s, s one way) of the "
                    "route between two containers of this machine (make_platforms.py --container-link)")
    ap.add_argument("--cpu-share", action="append", default=[], metavar="CONTAINER=S[,PERIOD]",
                    help="with --emulate --hostmap: that container gets the part S of its cores' time, a CFS quota "
                         "per PERIOD s (default: Linux's)")
    ap.add_argument("--out", default=os.path.join(TOP, "out", "compare-real"))
    ap.add_argument("--policies", nargs="+", default=["NOW", "RW"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sim-repeats", type=int, default=3,
                    help="SMPI runs per policy (with --emulate: per row), noise.seed 0, 1, ...; the median kept (by "
                         "total time; with --emulate by the ghost exchange), as the measured runs'; a scenario "
                         "without noise gives the same run each time: 3")
    ap.add_argument("--quick", action="store_true", help="a quick probe")
    ap.add_argument("--native", default=os.path.join(TOP, "build", "native", "demsim"))
    ap.add_argument("--smpi", default=os.path.join(TOP, "build", "smpi", "demsim"))
    args = ap.parse_args(argv)
    args.argv = sys.argv[1:]
    if not args.emulate and not args.hostmap:
        fail("--hostmap MAP is needed (or --emulate)")
    for what, path in (("scenario", args.scenario), ("--hostmap", args.hostmap or args.scenario)):
        if not os.path.isfile(path):
            fail(f"{what} {path}: no such file")
    for what, path in (("--native", args.native), ("--smpi", args.smpi)):
        if not os.access(path, os.X_OK):
            fail(f"{what} {path}: not an executable demsim (build it: cmake --build --preset "
                 f"{'native' if what == '--native' else 'smpi'})")
    if args.repeats < 1 or args.sim_repeats < 1:
        fail(f"--repeats {args.repeats}, --sim-repeats {args.sim_repeats}: expected at least 1 each")
    args.scenario = os.path.abspath(args.scenario)
    if args.emulate:
        return emulate(args, extra)
    args.hostmap = os.path.abspath(args.hostmap)
    os.makedirs(args.out, exist_ok=True)
    p = subprocess.run([args.native, "run", args.scenario, "--set", f"native.hostmap={args.hostmap}", "--dry-run"]
                       + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.stderr.write(p.stdout)
        fail("the scenario or the host map is not valid (above)", 2 if p.returncode == 2 else 1)
    hosts = map_hosts(args.hostmap)
    args.load_before = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else "?"
    args.load_before = " ".join(args.load_before)
    probe_json = probe(args, hosts)
    res, samples = run_all(args, extra)
    probe_json, platform_xml = calibration.interleaved_platform(args.out, probe_json, args.hostmap, samples,
                                                                search=calibration.read_search(search_file(args)))
    run_smpi(args, res, platform_xml, extra)
    report(args, res, probe_json, platform_xml)


if __name__ == "__main__":
    main()
